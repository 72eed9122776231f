// Reads a V8 .cpuprofile (node --cpu-prof) and prints the functions with the most self time, and
// (with --by package) self time grouped by package / file.
//
//   node bench/lib/cpuprofile-top.mjs <file.cpuprofile> [--top 40] [--by function|file|package] [--inclusive]
import fs from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: cpuprofile-top.mjs <file.cpuprofile> [--top 40] [--by function|file|package]');
  process.exit(2);
}
const opt = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const top = Number(opt('top', 40));
const by = opt('by', 'function');
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const totalUs = [...dt.values()].reduce((a, b) => a + b, 0);
const keyOf = (n) => {
  const cf = n.callFrame;
  const url = cf.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'nm:');
  if (by === 'package') {
    if (!url) return cf.functionName || '(native)';
    if (url.startsWith('nm:')) {
      const parts = url.slice(3).split('/');
      return `nm:${parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
    }
    if (url.startsWith('node:')) return url;
    return url
      .replace(/^.*\/(apps|libs|tools)\//, '$1/')
      .split('/')
      .slice(0, 3)
      .join('/');
  }
  if (by === 'file') return url || cf.functionName || '(native)';
  return `${cf.functionName || '(anonymous)'}  ${url.replace(/^.*\/(apps|libs|tools)\//, '$1/')}:${cf.lineNumber + 1}`;
};
const agg = new Map();
if (process.argv.includes('--inclusive')) {
  // Time under each function (itself and what it called), each key counted once per stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  for (const [id, us] of dt) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = keyOf(byId.get(cur));
      if (seen.has(k)) continue;
      seen.add(k);
      agg.set(k, (agg.get(k) ?? 0) + us);
    }
  }
} else {
  for (const [id, us] of dt) {
    const k = keyOf(byId.get(id));
    agg.set(k, (agg.get(k) ?? 0) + us);
  }
}
const idle = [...dt]
  .filter(([id]) => byId.get(id).callFrame.functionName === '(idle)')
  .reduce((a, [, us]) => a + us, 0);
console.log(
  `${file}: ${(totalUs / 1e6).toFixed(2)} s sampled, ${(((totalUs - idle) / totalUs) * 100).toFixed(1)}% busy`,
);
for (const [k, us] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((us / totalUs) * 100).toFixed(2).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
}
