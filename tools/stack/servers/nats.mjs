// nats-server with JetStream.
import fs from 'node:fs';
import path from 'node:path';
import { launch, requireBinary } from './launch.mjs';
import { LOOPBACK, waitForTcp } from './ports.mjs';

/**
 * Starts nats-server with JetStream on host:port, storing streams under `<dataDir>/jetstream`.
 * Resolves to { pid, url, port, reused } once the port accepts connections.
 */
export async function startNats({ port, dataDir, logFile, host = LOOPBACK, timeoutMs = 15000, onSpawn } = {}) {
  const bin = requireBinary('nats-server');
  dataDir = path.resolve(dataDir);
  fs.mkdirSync(path.join(dataDir, 'jetstream'), { recursive: true });
  const { pid, reused } = await launch('nats', {
    dataDir,
    port,
    logFile,
    onSpawn,
    label: 'NATS',
    envVar: 'NATS_URL',
    command: bin,
    args: ['-a', host, '-p', String(port), '-js', '-sd', path.join(dataDir, 'jetstream')],
    ready: (p, logOffset) => waitForTcp(host, port, timeoutMs, { pid: p, name: 'NATS', logFile, logOffset }),
  });
  return { pid, url: `nats://${host}:${port}`, port, reused };
}
