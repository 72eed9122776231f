import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMediaServers } from './media-launch.mjs';
import { mediaServerPairs } from './media-servers.mjs';
import { isAlive, stopPid } from './servers.mjs';

const scratch = fs.mkdtempSync(path.join(process.env.SB_TEST_DATA_DIR ?? os.tmpdir(), 'media-launch-spec-'));
const spawned: number[] = [];

afterAll(async () => {
  for (const pid of spawned) await stopPid(pid, { timeoutMs: 2000 }).catch(() => {});
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** A sleeping process whose command line looks like a Janus run on `confDir` (what isStackJanus checks). */
function fakeJanus(confDir: string): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'janus', '-F', confDir], {
    stdio: 'ignore',
  });
  child.unref();
  spawned.push(child.pid!);
  return child.pid!;
}

const agentApp = { dir: 'media-agent', service: 'media-agent', port: 8086, main: '/x/main.js' };
const otherApp = { dir: 'admin-gateway', service: 'admin-gateway', port: 8080, main: '/y/main.js' };

function fakeLauncher(previousPids: Record<string, number>, mediaNote: string) {
  const logged: string[] = [];
  return {
    logged,
    launcher: {
      paths: { dir: scratch, root: scratch, logs: path.join(scratch, 'logs') },
      previous: { pids: previousPids },
      mediaNote,
      mediaEnvs: new Map(),
      mediaPairCount: 0,
      urls: {},
      log: (line: string) => logged.push(line),
      checkInterrupted: () => {},
      save: () => {},
      trackServer: () => {},
    },
  };
}

describe('startMediaServers', () => {
  it('stops the Janus servers an earlier run left, of every pair, and no other process', async () => {
    const first = fakeJanus(path.join(scratch, 'janus', 'conf'));
    const third = fakeJanus(path.join(scratch, 'janus-3', 'conf'));
    const elsewhere = fakeJanus(path.join(scratch, 'other', 'conf'));
    const { launcher, logged } = fakeLauncher(
      { janus: first, 'janus-3': third, 'janus-2': elsewhere, nats: elsewhere },
      'Janus is not installed',
    );
    const pairs = mediaServerPairs(2, { stackDir: scratch, logsDir: launcher.paths.logs, agentPort: 8086 });

    const apps = await startMediaServers(launcher, [otherApp, agentApp], pairs);

    expect([isAlive(first), isAlive(third), isAlive(elsewhere)]).toEqual([false, false, true]);
    expect(logged.filter((l) => l.startsWith('Stopping'))).toEqual([
      `Stopping Janus left over from an earlier run (pid ${first})…`,
      `Stopping Janus 3 left over from an earlier run (pid ${third})…`,
    ]);
    // Without Janus the rest of the stack runs without media-agent.
    expect(apps).toEqual([otherApp]);
  });

  it('leaves the apps alone when there is no media-agent', async () => {
    const { launcher } = fakeLauncher({}, '');
    expect(await startMediaServers(launcher, [otherApp], [])).toEqual([otherApp]);
  });
});
