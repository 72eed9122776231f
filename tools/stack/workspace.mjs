// npm install (when node_modules is stale) and npm run build, before the stack or a benchmark runs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './apps.mjs';
import { StackError } from './servers.mjs';

/**
 * Runs a command with the terminal attached; resolves to its exit code. `stdoutToStderr` sends its
 * output to this process's stderr, for callers whose stdout is data (a benchmark's `--json`).
 */
function runInherited(command, args, cwd, { stdoutToStderr = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: stdoutToStderr ? ['inherit', process.stderr, 'inherit'] : 'inherit',
    });
    child.once('error', (error) => reject(new StackError(`Could not run ${command}: ${error.message}`)));
    child.once('close', (code, signal) => resolve(signal ? 128 : code));
  });
}

/** Why `npm install` must run first, or null when node_modules is current. */
export function installReason(root) {
  const modules = path.join(root, 'node_modules');
  const hidden = path.join(modules, '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (!fs.existsSync(modules)) return 'node_modules is missing';
  if (!fs.existsSync(hidden)) return 'node_modules was not installed by npm';
  if (fs.existsSync(lock) && fs.statSync(lock).mtimeMs > fs.statSync(hidden).mtimeMs)
    return 'package-lock.json changed since the last install';
  return null;
}

/**
 * What `npm start` and the benchmarks do before they run anything: `npm install` when node_modules
 * is not current (installReason), then `npm run build` (Nx: a cache hit, about 2 s, when nothing
 * changed). Throws a StackError when either fails.
 */
export async function prepareWorkspace({ root = REPO_ROOT, log = console.log, stdoutToStderr = false } = {}) {
  const reason = installReason(root);
  if (reason) {
    log(`Running npm install (${reason})…`);
    if ((await runInherited('npm', ['install'], root, { stdoutToStderr })) !== 0)
      throw new StackError('npm install failed (see above).');
  }
  log('Building (npm run build)…');
  if ((await runInherited('npm', ['run', 'build'], root, { stdoutToStderr })) !== 0)
    throw new StackError('npm run build failed (see above).');
}
