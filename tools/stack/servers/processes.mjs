// Processes from /proc: liveness, command lines, stopping, detached spawning and log tails.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StackError, tailText } from './stack-error.mjs';

const PROGRAMS = Object.freeze({ nats: 'nats-server', redis: 'redis-server', postgres: 'postgres' });

function procStatFields(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Whether `pid` is a live process. Zombies count as dead: PID 1 here does not always reap orphans. */
export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code !== 'EPERM') return false;
  }
  const state = procStatFields(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/** The command line of `pid` with arguments joined by spaces, or null. */
export function processCommandLine(pid) {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const text = raw.replace(/\0+$/, '').split('\0').join(' ').trim();
    return text || null;
  } catch {
    return null;
  }
}

/** Whether `pid` is alive and its command line contains every one of `needles`. */
export function processMatches(pid, ...needles) {
  if (!isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  return cmd !== null && needles.every((n) => cmd.includes(n));
}

/** Whether `pid` runs `program` (compared by executable name; Redis rewrites its title to "redis-server host:port"). */
export function isSameProgram(pid, program) {
  if (!isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  if (!cmd) return false;
  const first = cmd.split(' ')[0];
  return path.basename(first) === program;
}

function realpathOrSelf(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * Whether `pid` is the `name` server (nats, redis, postgres) that works on `dataDir`: the same program,
 * with the directory on its command line (NATS, PostgreSQL) or as its working directory (Redis
 * rewrites its command line, but runs inside --dir). A pid reused by anything else does not match.
 */
export function isServerOf(name, pid, dataDir) {
  if (!isSameProgram(pid, PROGRAMS[name])) return false;
  const dir = path.resolve(dataDir);
  if (processCommandLine(pid)?.includes(dir)) return true;
  try {
    return realpathOrSelf(fs.readlinkSync(`/proc/${pid}/cwd`)) === realpathOrSelf(dir);
  } catch {
    return false;
  }
}

async function waitUntilDead(pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  return true;
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
    return true;
  } catch (error) {
    if (error.code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Stops `pid`: sends `signal` (SIGTERM by default), waits up to `timeoutMs`, then SIGKILLs it (and its
 * process group when it leads one, so that children of a detached server go too). Resolves to true when
 * the process was running, false when it was already gone.
 */
export async function stopPid(pid, { timeoutMs = 10000, signal: sig = 'SIGTERM' } = {}) {
  if (!isAlive(pid)) return false;
  const leadsGroup = Number(procStatFields(pid)?.[2]) === pid;
  if (!signal(pid, sig)) return false;
  if (await waitUntilDead(pid, timeoutMs)) return true;
  try {
    process.kill(leadsGroup ? -pid : pid, 'SIGKILL');
  } catch {
    // it exited between the check and the kill
  }
  if (!(await waitUntilDead(pid, 5000))) {
    throw new StackError(`Process ${pid} did not exit even after SIGKILL.`);
  }
  return true;
}

export function fileSize(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** The last `lines` lines of a log file written since byte `offset`. */
export function readLogTail(file, offset = 0, lines = 30) {
  let text;
  try {
    const size = fileSize(file);
    const start = Math.max(offset, size - 64 * 1024);
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(Math.max(0, size - start));
      fs.readSync(fd, buffer, 0, buffer.length, start);
      text = buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
  return tailText(text, lines);
}

/**
 * Spawns a detached process (its own process group, so a terminal Ctrl-C does not reach it; the
 * launcher stops it in order) with stdout and stderr appended to `logFile`.
 * Resolves to { pid, child, logOffset }; rejects when the program cannot be executed.
 */
export async function spawnDetached(command, args, { logFile, env = process.env, cwd, uid, gid } = {}) {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const logOffset = fileSize(logFile);
  const fd = fs.openSync(logFile, 'a');
  let child;
  try {
    child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env, cwd, uid, gid });
  } finally {
    fs.closeSync(fd);
  }
  if (child.pid === undefined) {
    const [error] = await once(child, 'error');
    throw new StackError(`Could not start ${command}: ${error.message}`);
  }
  child.on('error', () => {});
  child.unref();
  return { pid: child.pid, child, logOffset };
}
