// The entry of every benchmark command (`node bench/<name>/run.mjs`), so that each is one command on
// a fresh clone too. It imports nothing but Node's own modules and tools/stack (which needs no
// npm package), because the benchmark itself cannot even be loaded before `npm install`:
// 1. as `npm start` does (prepareWorkspace): `npm install` when node_modules is not current, then
//    `npm run build` (a cache hit when nothing changed); their output goes to stderr, so that
//    `--json` keeps stdout for the figures;
// 2. runs the benchmark's module on the runtime the services ship on (serviceNode), load
//    generators included, with the same Node flags and arguments, and exits with its status.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT, serviceNode } from '../../tools/stack/apps.mjs';
import { StackError } from '../../tools/stack/servers.mjs';
import { prepareWorkspace } from '../../tools/stack/workspace.mjs';

/** Prepares the workspace, then runs `main` (a module URL) on the service runtime. */
export async function runBench(main) {
  try {
    await prepareWorkspace({ root: REPO_ROOT, log: (line) => process.stderr.write(`${line}\n`), stdoutToStderr: true });
  } catch (error) {
    if (!(error instanceof StackError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const node = serviceNode(REPO_ROOT);
  const child = spawn(node, [...process.execArgv, fileURLToPath(main), ...process.argv.slice(2)], { stdio: 'inherit' });
  // A signal for this command is the benchmark's: it stops its servers and services (env.mjs) and
  // exits. (A terminal's Ctrl-C reaches both processes; the benchmark handles it once.)
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c, s) => resolve([c, s]));
  });
  process.exit(code ?? (signal === 'SIGINT' ? 130 : 143));
}
