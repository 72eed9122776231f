// Loopback ports: finding free ones, waiting for a listener, and naming who holds one.
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, processCommandLine, readLogTail } from './processes.mjs';
import { StackError } from './stack-error.mjs';

export const LOOPBACK = '127.0.0.1';

const handedOut = new Set();

/** A TCP port that is free on the loopback interface right now (never the same one twice per process). */
export async function freePort(host = LOOPBACK) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.once('error', reject);
      server.listen(0, host, () => {
        const { port: p } = server.address();
        server.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new StackError('Could not find a free TCP port.');
}

/** Whether something else already holds `port` (we could not bind it ourselves). */
export function isPortInUse(port, host = LOOPBACK) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (error) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(true) : reject(error),
    );
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

export function tryConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Resolves once host:port accepts TCP connections. With `pid`, fails as soon as that process dies
 * (with the tail of `logFile` read from `logOffset` on) instead of waiting for the timeout.
 */
export async function waitForTcp(host, port, timeoutMs = 10000, { pid, name, logFile, logOffset } = {}) {
  const label = name ?? `${host}:${port}`;
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    if (await tryConnect(host, port)) return;
    if (pid !== undefined && !isAlive(pid)) {
      throw new StackError(`${label} exited during start-up.`, {
        logTail: logFile ? readLogTail(logFile, logOffset) : undefined,
      });
    }
    if (Date.now() >= deadline) {
      throw new StackError(
        `${label} did not accept connections on ${host}:${port} within ${Math.round(timeoutMs / 1000)} s.`,
        {
          logTail: logFile ? readLogTail(logFile, logOffset) : undefined,
        },
      );
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}

/** Inodes of sockets listening on `port` (IPv4 and IPv6), from /proc/net. */
function listeningInodes(port) {
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A') continue; // 0A = LISTEN
      if (Number.parseInt(cols[1].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  return inodes;
}

function pidHoldsSocket(pid, inodes) {
  let fds;
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) return true;
    } catch {
      // fd closed while we looked
    }
  }
  return false;
}

/** Processes listening on `port`, best effort from /proc: [{ pid, command }]. Empty when unknown. */
export function portOwners(port) {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return [];
  let pids;
  try {
    pids = fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
  return pids
    .filter((pid) => pidHoldsSocket(pid, inodes))
    .map((pid) => ({ pid, command: processCommandLine(pid) ?? '?' }));
}

/** Whether process `pid` listens on `port` (false when /proc cannot tell). */
export function pidListensOn(pid, port) {
  const inodes = listeningInodes(port);
  return inodes.size > 0 && pidHoldsSocket(pid, inodes);
}

export function describePortOwners(port) {
  const owners = portOwners(port);
  if (owners.length === 0) return 'another process';
  return owners.map((o) => `pid ${o.pid} (${truncate(o.command, 80)})`).join(', ');
}

function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export async function assertPortFree(port, label, envVar) {
  if (await isPortInUse(port)) {
    throw new StackError(
      `Port ${port} on ${LOOPBACK}, needed for ${label}, is already in use by ${describePortOwners(port)}.\n` +
        `Stop that process${envVar ? `, or set ${envVar} to use an existing server instead` : ''}.`,
    );
  }
}
