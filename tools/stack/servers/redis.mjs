// redis-server, ready once it answers PING (not merely accepts connections).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch, requireBinary } from './launch.mjs';
import { LOOPBACK, waitForTcp } from './ports.mjs';
import { isAlive, readLogTail } from './processes.mjs';
import { StackError } from './stack-error.mjs';

/** One PING over a raw socket: resolves to the first reply line, or null on any failure. */
function redisPing(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    const done = (value) => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('error', () => done(null));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      const end = reply.indexOf('\r\n');
      if (end >= 0) done(reply.slice(0, end));
    });
  });
}

async function waitForRedis(host, port, timeoutMs, details) {
  const deadline = Date.now() + timeoutMs;
  await waitForTcp(host, port, timeoutMs, details);
  // While Redis replays its append-only file it accepts connections but answers -LOADING.
  for (;;) {
    const reply = await redisPing(host, port);
    if (reply === '+PONG') return;
    if (details.pid !== undefined && !isAlive(details.pid)) {
      throw new StackError('Redis exited during start-up.', {
        logTail: readLogTail(details.logFile, details.logOffset),
      });
    }
    if (Date.now() >= deadline) {
      throw new StackError(
        `Redis on ${host}:${port} did not answer PING within ${Math.round(timeoutMs / 1000)} s (last reply: ${reply ?? 'none'}).`,
        {
          logTail: readLogTail(details.logFile, details.logOffset),
        },
      );
    }
    await sleep(50);
  }
}

/**
 * Starts redis-server on host:port with its files in `dataDir`: append-only file with fsync every
 * second and no RDB snapshots (`persist: false` turns the AOF off too, for tests).
 * Resolves to { pid, url, port, reused } once it answers PING.
 */
export async function startRedis({
  port,
  dataDir,
  logFile,
  host = LOOPBACK,
  persist = true,
  timeoutMs = 15000,
  onSpawn,
} = {}) {
  const bin = requireBinary('redis-server');
  dataDir = path.resolve(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const args = [
    '--bind',
    host,
    '--port',
    String(port),
    '--dir',
    dataDir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--appendonly',
    persist ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--save',
    '',
  ];
  const { pid, reused } = await launch('redis', {
    dataDir,
    port,
    logFile,
    onSpawn,
    label: 'Redis',
    envVar: 'REDIS_URL',
    command: bin,
    args,
    spawnOptions: { cwd: dataDir },
    ready: (p, logOffset) => waitForRedis(host, port, timeoutMs, { pid: p, name: 'Redis', logFile, logOffset }),
  });
  return { pid, url: `redis://${host}:${port}`, port, reused };
}
