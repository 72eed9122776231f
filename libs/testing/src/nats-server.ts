import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { testServers } from './servers.js';
import { freePort, repoRoot } from './service.js';

export interface OwnNatsServer {
  /** nats://127.0.0.1:<port>, JetStream enabled. */
  url: string;
  /** The running server's pid (a new one after `start`). */
  pid: number;
  /** Kills the server (SIGKILL, a crash); its JetStream data stays for `start`. */
  kill(): Promise<void>;
  /** Starts it again after `kill`, on the same port with the same JetStream data. */
  start(): Promise<void>;
  /** Stops the server and deletes its data. Safe to call twice. */
  stop(): Promise<void>;
}

export interface OwnNatsOptions {
  /** The server's `max_payload` in bytes (nats-server's default is 1 MB). */
  maxPayload?: number;
}

/**
 * A nats-server of the test's own, for tests that need limits other than those of the run's shared
 * server (a small `max_payload` to exercise replies larger than it without building megabytes of
 * state), or that crash and restart it. Same binary as the global setup, JetStream on, data under
 * the run's data directory; stop it in afterAll.
 */
export async function startNatsServer(options: OwnNatsOptions = {}): Promise<OwnNatsServer> {
  const { findBinary } = (await import(pathToFileURL(path.join(repoRoot(), 'tools/stack/servers.mjs')).href)) as {
    findBinary: (name: string) => string | null;
  };
  const bin = findBinary('nats-server');
  if (!bin)
    throw new Error('nats-server is not installed (the jest global setup installs it: run tests with `npm run jest`).');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(testServers().dataDir, 'nats-own-'));
  const lines = [
    `listen: "127.0.0.1:${port}"`,
    `jetstream { store_dir: ${JSON.stringify(path.join(dir, 'jetstream'))} }`,
  ];
  if (options.maxPayload !== undefined) lines.push(`max_payload: ${options.maxPayload}`);
  const config = path.join(dir, 'nats.conf');
  fs.writeFileSync(config, `${lines.join('\n')}\n`);

  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const halt = async (signal: NodeJS.Signals) => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    child = null;
  };
  const launch = async () => {
    const log = fs.openSync(path.join(dir, 'nats.log'), 'a');
    const started = spawn(bin, ['-c', config], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    child = started;
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    try {
      await untilListening(port, () => started.exitCode !== null, 15000);
    } catch (e) {
      const output = fs.readFileSync(path.join(dir, 'nats.log'), 'utf8').slice(-2000);
      await halt('SIGTERM');
      throw new Error(`${(e as Error).message}\n${output}`);
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await halt('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await launch();
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    get pid() {
      if (!child?.pid) throw new Error('the server is not running');
      return child.pid;
    },
    kill: () => halt('SIGKILL'),
    async start() {
      if (!child) await launch();
    },
    stop,
  };
}

async function untilListening(port: number, died: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (died()) throw new Error('nats-server exited while starting');
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
