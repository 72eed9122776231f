import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { freePort, testServers } from '@switchboard/testing';
import { startJanus, stopJanus, janusAlive, janusLogTail } from '../stack/janus.mjs';

export interface TestJanus {
  readonly wsUrl: string;
  readonly adminUrl: string;
  readonly adminSecret: string;
  readonly roomAdminKey: string;
  /** The running Janus process (changes on restart). */
  readonly pid: number;
  /** Sends `signal` (SIGKILL: a crash) and waits until the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts Janus again with the same configuration and ports. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  logTail(): string;
}

/**
 * A real Janus for one test file: configuration in a directory of the run's data dir, Janus API
 * and Admin API WebSockets on free loopback ports, run as `nobody` when the tests run as root.
 * No ICE here (host namespace, loopback): media tests need the namespace of the spike.
 */
export async function startTestJanus(options: { sessionTimeoutSeconds?: number } = {}): Promise<TestJanus> {
  const settings = {
    dataDir: path.join(testServers().dataDir, `janus-${randomBytes(4).toString('hex')}`),
    wsPort: await freePort(),
    adminPort: await freePort(),
    adminSecret: randomBytes(12).toString('hex'),
    roomAdminKey: randomBytes(12).toString('hex'),
    ...options,
  };
  let started = await startJanus(settings);
  const wait = async () => {
    for (let i = 0; i < 200 && janusAlive(started.pid); i++) await new Promise((r) => setTimeout(r, 25));
  };
  return {
    wsUrl: started.wsUrl,
    adminUrl: started.adminUrl,
    adminSecret: settings.adminSecret,
    roomAdminKey: settings.roomAdminKey,
    get pid() {
      return started.pid;
    },
    async kill(signal = 'SIGKILL') {
      process.kill(started.pid, signal);
      await wait();
    },
    async restart() {
      if (janusAlive(started.pid)) throw new Error(`Janus (pid ${started.pid}) still runs`);
      started = await startJanus(settings);
    },
    async stop() {
      await stopJanus(started.pid);
    },
    logTail: () => janusLogTail(started.logFile),
  };
}
