#!/usr/bin/env node
// `postinstall` of the root package: npm builds native addons (janode's `unix-dgram`) with the Node
// that runs npm, but services and tests run on the pinned Node (node_modules/.bin/node, from the
// node-linux-<arch> package). When that Node cannot load an addon, rebuild it against the pinned
// Node's headers. Plain Node built-ins only.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ADDONS = ['unix-dgram'];

/** The directory of the node-linux-<arch> package (bin/node and include/node), or null. */
export function pinnedNodeDir(root = ROOT) {
  const dir = path.join(root, 'node_modules', `node-${process.platform}-${process.arch}`);
  return fs.existsSync(path.join(dir, 'bin', 'node')) && fs.existsSync(path.join(dir, 'include', 'node')) ? dir : null;
}

/** Whether `node` can load the package `name` from the repository root. */
export function loads(node, name, root = ROOT) {
  return spawnSync(node, ['-e', `require(${JSON.stringify(name)})`], { cwd: root, stdio: 'ignore' }).status === 0;
}

function main() {
  const nodeDir = pinnedNodeDir();
  if (!nodeDir) return; // no pinned Node: the Node that ran npm is the one that runs the services
  const node = path.join(nodeDir, 'bin', 'node');
  for (const name of ADDONS) {
    if (!fs.existsSync(path.join(ROOT, 'node_modules', name)) || loads(node, name)) continue;
    console.log(`Rebuilding ${name} for the pinned Node (${nodeDir})…`);
    // Under npm, run the same npm (its script path through this Node); otherwise the npm on PATH.
    const npmCommand = process.env.npm_execpath ? process.execPath : 'npm';
    const npmScript = process.env.npm_execpath ? [process.env.npm_execpath] : [];
    const result = spawnSync(
      npmCommand,
      [...npmScript, 'rebuild', name, `--nodedir=${nodeDir}`, '--foreground-scripts'],
      {
        cwd: ROOT,
        stdio: 'inherit',
      },
    );
    if (result.status !== 0 || !loads(node, name)) {
      console.error(
        `warning: ${name} could not be built for ${node}; media-agent (janode) will not start. Run \`npm rebuild ${name} --nodedir=${nodeDir}\`.`,
      );
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
