// Every benchmark command runs, as documented, with small figures: each must go from its command
// (which prepares the workspace and moves to the services' Node, bench/lib/entry.mjs) through its
// own servers and services to its report. Nothing here asserts a timing or a ratio's size (the
// figures of such short runs mean nothing): only that each phase ran, delivered what it sent, and
// reported. The benchmarks start their servers on free ports of their own.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mediaNetnsUnavailable } from '../../tools/testing/media-netns.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `whenRunning` is called with the command's process once it runs (to signal it). */
function bench(command: string, args: string[], whenRunning?: (child: ReturnType<typeof spawn>) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    // A process group of its own, as a terminal would start it (a Ctrl-C there signals the group).
    const child = spawn(process.execPath, [path.join(ROOT, command), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    whenRunning?.(child);
  });
}

/**
 * The processes running now that use `dir`: in their command line, as their working directory, or through an open file
 * (a log).
 */
function processesUsing(dir: string): string[] {
  const found: string[] = [];
  const inside = (target: string) => target === dir || target.startsWith(`${dir}/`);
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const line = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const fds = fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
        try {
          return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return '';
        }
      });
      if (line.includes(dir) || inside(fs.readlinkSync(`/proc/${pid}/cwd`)) || fds.some(inside))
        found.push(`${pid} ${line}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The run's exit code, with what it printed when that is not 0 (so that a failure says why). */
function outcome(run: Run): string {
  return run.code === 0 ? 'exit 0' : `exit ${run.code}\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`;
}

const RATIO = /\d+\.\d\d/;

const TIMEOUT_MS = 240_000;

interface MediaReport {
  join: Record<string, { p50: number }>;
  cpu: Record<string, { ratio: number; usPerStreamSecond: Record<string, number> }>;
  moderate: Record<string, { mutes: number; notSilenced: number }>;
  capacity: { controller: string; steps: Array<{ pairs: number; loss: number }> };
}

const MEDIA_CONTROLLERS = ['direct', 'agent', 'control-plane'];

describe('benchmark commands', () => {
  it(
    'bench/media/run.mjs --json: every controller joins, forwards, mutes at Janus, and the control plane holds pairs',
    async () => {
      expect(mediaNetnsUnavailable()).toBeNull();
      const small = '--clients 2 --pairs 2 --seconds 2 --rounds 1 --mutes 2 --step 2 --max-pairs 2 --json';
      const run = await bench('bench/media/run.mjs', small.split(' '));
      expect(outcome(run)).toBe('exit 0');
      const report = JSON.parse(run.stdout) as MediaReport;
      for (const name of MEDIA_CONTROLLERS) {
        expect(report.join[name]!.p50).toBeGreaterThan(0);
        expect(report.cpu[name]!.ratio).toBeGreaterThan(0);
        // A mute through interface A reaches Janus as the agent's and janode's do.
        expect({ name, ...report.moderate[name] }).toMatchObject({ name, mutes: 2, notSilenced: 0 });
      }
      expect(Object.keys(report.cpu['control-plane']!.usPerStreamSecond)).toEqual(
        expect.arrayContaining(['janus', 'media-agent', 'runtime-registry', 'admin-gateway', 'postgres']),
      );
      expect(report.capacity.controller).toBe('control-plane');
      expect(report.capacity.steps[0]).toMatchObject({ pairs: 2 });
      expect(report.capacity.steps[0]!.loss).toBeLessThan(1);
    },
    TIMEOUT_MS,
  );

  it(
    'bench/webhooks/run.mjs --json: every event of the steady phase and of the burst is delivered, and stdout is the JSON alone',
    async () => {
      const run = await bench('bench/webhooks/run.mjs', [
        '--rate',
        '200',
        '--seconds',
        '1',
        '--warmup',
        '1',
        '--burst',
        '500',
        '--raw',
        '500',
        '--rounds',
        '1',
        '--json',
      ]);
      expect(outcome(run)).toBe('exit 0');
      // The build's output went to stderr: stdout parses as a whole.
      const report = JSON.parse(run.stdout) as {
        steady: { published: number; delivered: number; allDelivered: boolean };
        burst: { events: number; delivered: number; allDelivered: boolean };
        rounds: Array<{ ratio: number }>;
        ratio: { burstToRawBullmq: number };
      };
      expect(report.steady.allDelivered).toBe(true);
      expect(report.steady.delivered).toBe(report.steady.published);
      expect(report.burst).toMatchObject({ events: 500, delivered: 500, allDelivered: true });
      expect(report.rounds).toHaveLength(1);
      expect(report.ratio.burstToRawBullmq).toBeGreaterThan(0);
      expect(run.stderr).toMatch(/Building \(npm run build\)/);
    },
    TIMEOUT_MS,
  );

  it(
    'bench/webhooks/run.mjs stopped by Ctrl-C stops its servers and services, which run detached, and removes its data',
    async () => {
      const before = new Set(fs.existsSync(path.join(ROOT, '.data')) ? fs.readdirSync(path.join(ROOT, '.data')) : []);
      let dir: string | undefined;
      const run = await bench(
        'bench/webhooks/run.mjs',
        ['--rate', '200', '--seconds', '60', '--warmup', '1', '--burst', '500', '--raw', '500', '--rounds', '1'],
        (child) => {
          // Interrupted once its worker runs (its log is in the benchmark's data directory).
          const poll = setInterval(() => {
            const fresh = fs
              .readdirSync(path.join(ROOT, '.data'))
              .filter((d) => d.startsWith('bench-') && !before.has(d));
            const candidate = fresh
              .map((d) => path.join(ROOT, '.data', d))
              .find((d) => fs.existsSync(d) && fs.readdirSync(d).some((f) => f.startsWith('webhook-worker-')));
            if (!candidate) return;
            dir = candidate;
            clearInterval(poll);
            // Ctrl-C: SIGINT to the whole group (run.mjs and the benchmark it runs).
            process.kill(-child.pid!, 'SIGINT');
          }, 100);
          child.once('close', () => clearInterval(poll));
        },
      );
      expect(dir).toBeDefined();
      expect(run.code).toBe(130);
      expect(run.stderr.match(/SIGINT: stopping the benchmark's servers and services/g)).toHaveLength(1);
      // Its NATS, Redis and PostgreSQL ran with their data under `dir`, the worker with its log there.
      expect(processesUsing(dir!)).toEqual([]);
      expect(fs.existsSync(dir!)).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'bench/webhooks/pg-log.mjs: one variant measured',
    async () => {
      const run = await bench('bench/webhooks/pg-log.mjs', [
        'current',
        '--deliveries',
        '300',
        '--rounds',
        '1',
        '--per-log',
        '60',
      ]);
      expect(outcome(run)).toBe('exit 0');
      expect(run.stdout).toMatch(/^current\s+outbox insert \d+\.\d µs\/delivery, attempt log \d+\.\d µs\/delivery/m);
    },
    TIMEOUT_MS,
  );

  it(
    'bench/odata/run.mjs: the OData read path against the hand-written query',
    async () => {
      const run = await bench('bench/odata/run.mjs', ['--rows', '2000', '--queries', '100', '--concurrency', '2']);
      expect(outcome(run)).toBe('exit 0');
      expect(run.stdout).toMatch(/loaded 2000 change records/);
      expect(run.stdout).toMatch(new RegExp(`ratio OData / hand-written: ${RATIO.source}`));
    },
    TIMEOUT_MS,
  );

  it(
    'bench/admin/run.mjs: snapshots through the gateway against the bare server, and /sync connects without errors',
    async () => {
      const run = await bench('bench/admin/run.mjs', [
        '--duration',
        '1',
        '--rounds',
        '1',
        '--concurrency',
        '4',
        '--connections',
        '1000',
        '--sync-clients',
        '50',
        '--sync-concurrency',
        '10',
      ]);
      expect(outcome(run)).toBe('exit 0');
      expect(run.stdout).toMatch(new RegExp(`gateway / bare \\(100 connections\\):\\s+${RATIO.source}`));
      expect(run.stdout).toMatch(new RegExp(`1000 / 100 connections \\(gateway\\): ${RATIO.source}`));
      expect(run.stdout).toMatch(/\/sync register\+join\+connect: [1-9]\d* clients\/s/);
      expect(run.stdout).not.toMatch(/errors: /);
    },
    TIMEOUT_MS,
  );
});
