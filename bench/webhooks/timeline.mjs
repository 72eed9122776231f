// A per-bucket timeline of the CPU each process of the pipeline used, how long their threads waited
// for a CPU (and what the machine did besides), sampled from /proc by a worker thread so that a busy
// bench event loop does not delay the samples. Linux only. See bench/webhooks/README.md ("--timeline").
//
//   const t = startTimeline({ worker: pid, ... }, { postmaster: pid, intervalMs: 100 });
//   ... const { samples, others } = await t.stop();
//   const rows = bucketTimeline(samples, { pub: [epoch ms, ...], recv: [...] }, originMs, { acked: [[epoch ms, value],
// ...] });
//   console.log(formatTimeline(rows));
//
// The sampling costs the bench process a little CPU (a few dozen /proc reads per sample).
import fs from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const TICK_NS = 1e7; // 100 ticks per second

/**
 * Of every thread of `pid` so far, from /proc/<pid>/task/<tid>/schedstat: the time run on a CPU and
 * the time spent runnable, waiting for a CPU (ns).
 */
function threadsNs(pid) {
  const ns = { run: 0, wait: 0 };
  let tids;
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return { run: NaN, wait: NaN };
  }
  for (const tid of tids) {
    try {
      const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
      ns.run += Number(run);
      ns.wait += Number(wait);
    } catch {
      // thread gone
    }
  }
  return ns;
}

/**
 * PostgreSQL as one: every backend alive (schedstat, ns) plus the postmaster's own and what it
 * reaped (cutime + cstime, in ticks: backends that ended count once the postmaster reaped them; their
 * waits for a CPU only while they were alive).
 */
function postgresNs(postmaster) {
  const ns = threadsNs(postmaster);
  try {
    const stat = fs.readFileSync(`/proc/${postmaster}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ns.run += (Number(f[13]) + Number(f[14])) * TICK_NS;
    const children = fs.readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim();
    for (const c of children ? children.split(' ') : []) {
      try {
        const [run, wait] = fs.readFileSync(`/proc/${c}/schedstat`, 'utf8').split(' ');
        ns.run += Number(run);
        ns.wait += Number(wait);
      } catch {
        // ended: counted through cutime once reaped
      }
    }
  } catch {
    return { run: NaN, wait: NaN };
  }
  return ns;
}

/** The machine's CPU ticks (all cores): busy (user, nice, system, irq, softirq), idle (with iowait), steal. */
function machineTicks() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
}

function sampleOnce(pids, postmaster) {
  const ns = {};
  for (const [name, pid] of Object.entries(pids)) ns[name] = threadsNs(pid);
  if (postmaster) ns.postgres = postgresNs(postmaster);
  return { at: Date.now(), ns, machine: machineTicks() };
}

/** CPU ticks so far of every process on the machine ({ pid: { name, ticks } }). */
function allProcesses() {
  const out = {};
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[entry] = {
        name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        ppid: Number(f[1]),
        ticks: Number(f[11]) + Number(f[12]),
      };
    } catch {
      // gone
    }
  }
  return out;
}

if (!isMainThread && workerData?.timeline) {
  const { pids, postmaster, intervalMs } = workerData;
  const processesBefore = allProcesses();
  const samples = [sampleOnce(pids, postmaster)];
  const started = samples[0].at;
  let n = 0;
  // Sample on a fixed grid (drift-free); a late tick just makes a longer bucket.
  const tick = () => {
    samples.push(sampleOnce(pids, postmaster));
    n++;
    timer = setTimeout(tick, Math.max(0, started + (n + 1) * intervalMs - Date.now()));
  };
  let timer = setTimeout(tick, intervalMs);
  parentPort.on('message', (m) => {
    if (m !== 'stop') return;
    clearTimeout(timer);
    samples.push(sampleOnce(pids, postmaster));
    // The other processes that used CPU meanwhile (the pipeline's own, PostgreSQL's backends included, left out).
    const ours = new Set([...Object.values(pids), postmaster].map(String));
    const after = allProcesses();
    const others = Object.entries(after)
      .filter(([pid, p]) => !ours.has(pid) && !ours.has(String(p.ppid)))
      .map(([pid, p]) => ({
        pid: Number(pid),
        name: p.name,
        cpuSeconds: (p.ticks - (processesBefore[pid]?.ticks ?? 0)) / 100,
      }))
      .filter((p) => p.cpuSeconds > 0)
      .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
      .slice(0, 5);
    parentPort.postMessage({ samples, others });
  });
}

/**
 * Starts sampling `pids` ({ name: pid }) and PostgreSQL (`postmaster`) every `intervalMs`; `stop()`
 * answers `{ samples, others }`: the samples, and the five other processes that used the most CPU
 * meanwhile (`{ pid, name, cpuSeconds }`).
 */
export function startTimeline(pids, { postmaster, intervalMs = 100 } = {}) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { timeline: true, pids, postmaster, intervalMs } });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (answer) => {
          worker.terminate().then(() => resolve(answer), reject);
        });
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

/**
 * Per pair of consecutive samples: the start (ms after `origin`), its length, the cores each
 * process used, the machine's busy, idle and stolen cores and its busy cores not used by these
 * processes (`other`), how many of each `counts` series (epoch ms, sorted or not) fell in it, and
 * the last value of each `gauges` series read before it ended.
 */
export function bucketTimeline(samples, counts = {}, origin = samples[0]?.at ?? 0, gauges = {}) {
  const sorted = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Float64Array.from(v).sort()]));
  const cursor = Object.fromEntries(Object.keys(counts).map((k) => [k, 0]));
  const rows = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const ms = b.at - a.at;
    if (ms <= 0) continue;
    const cores = {};
    let waiting = 0;
    for (const name of Object.keys(b.ns)) {
      cores[name] = +((b.ns[name].run - a.ns[name].run) / 1e6 / ms).toFixed(2);
      const wait = (b.ns[name].wait - a.ns[name].wait) / 1e6 / ms;
      if (Number.isFinite(wait)) waiting += wait;
    }
    const ticks = (k) => b.machine[k] - a.machine[k];
    const all = ticks('busy') + ticks('idle') + ticks('steal');
    const machineCores = all / ((ms / 1000) * 100); // ~ the number of cores
    const row = {
      t: Math.round(a.at - origin),
      ms: Math.round(ms),
      cores,
      machine: {
        busy: +((ticks('busy') / all) * machineCores).toFixed(2),
        idle: +((ticks('idle') / all) * machineCores).toFixed(2),
        steal: +((ticks('steal') / all) * machineCores).toFixed(2),
      },
      // The processes' threads runnable but not running (queued for a CPU), in cores' worth of time:
      // beside idle cores, work that was there and waited.
      waiting: +waiting.toFixed(2),
    };
    // Busy cores not accounted for by the processes sampled: other work on the machine.
    row.machine.other = +Math.max(
      0,
      row.machine.busy - Object.values(cores).reduce((s, c) => s + (Number.isFinite(c) ? c : 0), 0),
    ).toFixed(2);
    // Gauges ([[at, value], ...] by time): the last value read before the bucket ended.
    for (const [k, points] of Object.entries(gauges)) {
      let v = null;
      for (const [at, value] of points) if (at < b.at) v = value;
      row[k] = v;
    }
    for (const [k, v] of Object.entries(sorted)) {
      let j = cursor[k];
      while (j < v.length && v[j] < a.at) j++;
      let n = 0;
      while (j < v.length && v[j] < b.at) {
        j++;
        n++;
      }
      cursor[k] = j;
      row[k] = n;
    }
    rows.push(row);
  }
  return rows;
}

/** The timeline as a fixed-width table (one line per bucket). */
export function formatTimeline(rows) {
  if (rows.length === 0) return '';
  const names = Object.keys(rows[0].cores);
  const series = Object.keys(rows[0]).filter((k) => !['t', 'ms', 'cores', 'machine', 'waiting'].includes(k));
  const short = (n) => n.replace(/ .*/, '').replace('webhook-worker', 'worker').replace('-server', '');
  const head = ['t ms', ...names.map(short), 'sum', 'other', 'idle', 'steal', 'waiting', ...series]
    .map((h) => h.padStart(9))
    .join('');
  const lines = rows.map((r) => {
    const sum = names.reduce((s, n) => s + (Number.isFinite(r.cores[n]) ? r.cores[n] : 0), 0);
    return [
      r.t,
      ...names.map((n) => r.cores[n].toFixed(2)),
      sum.toFixed(2),
      r.machine.other.toFixed(2),
      r.machine.idle.toFixed(2),
      r.machine.steal.toFixed(2),
      r.waiting.toFixed(2),
      ...series.map((k) => r[k]),
    ]
      .map((v) => String(v).padStart(9))
      .join('');
  });
  return [head, ...lines].join('\n');
}
