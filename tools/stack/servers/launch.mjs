// Launching a server once: reusing the one a PID file names, or spawning it on a free port.
import fs from 'node:fs';
import path from 'node:path';
import { ensureBinaries, findBinary } from './binaries.mjs';
import { assertPortFree, pidListensOn } from './ports.mjs';
import { fileSize, isServerOf, spawnDetached, stopPid } from './processes.mjs';

/** How each server shuts down cleanly. SIGINT is PostgreSQL's "fast" shutdown; its SIGTERM waits for clients. */
export const STOP_SIGNALS = Object.freeze({ nats: 'SIGTERM', redis: 'SIGTERM', postgres: 'SIGINT' });

/** Stops a server started by this module with the signal that shuts it down cleanly. */
export async function stopServer(name, pid, { timeoutMs = 15000, dataDir } = {}) {
  const stopped = await stopPid(pid, { timeoutMs, signal: STOP_SIGNALS[name] ?? 'SIGTERM' });
  if (dataDir) removePidFile(name, dataDir, pid);
  return stopped;
}

// ---------------------------------------------------------------------------------------------
// PID files: <dataDir>/../<name>.pid lets a restart find (and reuse) a server left running.

export function pidFilePath(name, dataDir) {
  return path.join(path.dirname(path.resolve(dataDir)), `${name}.pid`);
}

export function readPidFile(file) {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function writePidFile(name, dataDir, pid) {
  fs.writeFileSync(pidFilePath(name, dataDir), `${pid}\n`);
}

function removePidFile(name, dataDir, pid) {
  const file = pidFilePath(name, dataDir);
  if (pid === undefined || readPidFile(file) === pid) fs.rmSync(file, { force: true });
}

/**
 * The pid of a server of ours from an earlier run that can be reused: alive, the same program, and
 * listening on `port`. A live one on another port is stopped; a stale PID file is removed.
 */
async function adoptRunning(name, dataDir, port) {
  const file = pidFilePath(name, dataDir);
  const pid = readPidFile(file);
  if (pid === null) return null;
  if (!isServerOf(name, pid, dataDir)) {
    fs.rmSync(file, { force: true });
    return null;
  }
  if (pidListensOn(pid, port)) return pid;
  await stopServer(name, pid, { dataDir });
  return null;
}

/** Stops the server recorded in `<dataDir>/../<name>.pid` if it is still running. */
export async function stopRecordedServer(name, dataDir, options = {}) {
  const pid = readPidFile(pidFilePath(name, dataDir));
  if (pid === null) return false;
  if (!isServerOf(name, pid, dataDir)) {
    removePidFile(name, dataDir);
    return false;
  }
  return stopServer(name, pid, { ...options, dataDir });
}

export function requireBinary(name) {
  const bin = findBinary(name);
  if (!bin) ensureBinaries({ install: false, servers: [name === 'nats-server' ? 'nats' : 'redis'], ffmpeg: false });
  return bin;
}

export async function launch(
  name,
  { dataDir, port, command, args, logFile, label, envVar, onSpawn, spawnOptions, prepare, ready },
) {
  const reused = await adoptRunning(name, dataDir, port);
  if (reused !== null) {
    onSpawn?.(reused);
    await ready(reused, fileSize(logFile));
    return { pid: reused, reused: true };
  }
  await assertPortFree(port, label, envVar);
  await prepare?.();
  const { pid, logOffset } = await spawnDetached(command, args, { logFile, ...spawnOptions });
  writePidFile(name, dataDir, pid);
  onSpawn?.(pid);
  try {
    await ready(pid, logOffset);
  } catch (error) {
    await stopServer(name, pid, { dataDir, timeoutMs: 5000 }).catch(() => {});
    throw error;
  }
  return { pid, reused: false };
}
