// Shared scaffolding of the benchmarks: real NATS, Redis and PostgreSQL on free loopback ports
// (data under .data/bench-<pid>), the built services as processes, and teardown by PID.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { discoverApps, REPO_ROOT, runMigrations, runNodeScript } from '../../tools/stack/apps.mjs';
import {
  ensureBinaries,
  ensureDatabase,
  freePort,
  startNats,
  startPostgres,
  startRedis,
  stopPid,
  withDatabase,
} from '../../tools/stack/servers.mjs';

export { freePort };

export async function startBenchEnvironment({ postgres = true, redis = true } = {}) {
  ensureBinaries({ install: true, ffmpeg: false, log: () => {} });
  const dir = path.join(REPO_ROOT, '.data', `bench-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true });
  const stops = [];
  /** PIDs of the servers and services, by name (CPU accounting, see cpu.mjs). */
  const pids = {};
  const env = { NATS_NAMESPACE: 'bench', LOG_LEVEL: 'warn' };
  const services = [];
  const urls = {};
  // The servers run detached (a terminal's Ctrl-C does not reach them): they are stopped here when
  // the start fails half-way, and when the benchmark is interrupted (SIGINT, SIGTERM).
  const stopAll = async () => {
    for (const child of [...services].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
    }
    for (const stop of [...stops].reverse()) await stop().catch(() => {});
  };
  // Once: a terminal's Ctrl-C reaches this process both directly and forwarded by run.mjs.
  let interruptedBy;
  const interrupted = (signal) => {
    if (interruptedBy) return;
    interruptedBy = signal;
    process.stderr.write(`${signal}: stopping the benchmark's servers and services\n`);
    void stopAll().finally(() => {
      fs.rmSync(dir, { recursive: true, force: true });
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  const forgetSignals = () => {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  };
  try {
    const nats = await startNats({
      port: await freePort(),
      dataDir: path.join(dir, 'nats'),
      logFile: path.join(dir, 'nats.log'),
    });
    stops.push(() => stopPid(nats.pid));
    pids['nats-server'] = nats.pid;
    env.NATS_URL = nats.url;
    if (redis) {
      const r = await startRedis({
        port: await freePort(),
        dataDir: path.join(dir, 'redis'),
        logFile: path.join(dir, 'redis.log'),
        persist: false,
      });
      stops.push(() => stopPid(r.pid));
      pids['redis-server'] = r.pid;
      env.REDIS_URL = r.url;
    }
    if (postgres) {
      const pg = await startPostgres({
        port: await freePort(),
        dataDir: path.join(dir, 'pg'),
        logFile: path.join(dir, 'pg.log'),
        fsync: false,
      });
      stops.push(() => stopPid(pg.pid, { signal: 'SIGINT' }));
      pids.postgres = pg.pid;
      await ensureDatabase(pg.url, 'bench');
      env.DATABASE_URL = withDatabase(pg.url, 'bench');
      env.PG_ADMIN_URL = pg.url;
      await runMigrations(discoverApps(), { env: { ...process.env, ...env }, logDir: dir, unbuilt: 'throw' });
    }
  } catch (error) {
    forgetSignals();
    await stopAll();
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    env,
    dir,
    pids,
    /** Base URL of each started service, by name. */
    services: urls,
    /** Starts `apps/<name>` built entry point; resolves when /readyz answers 200. */
    async startService(name, extraEnv = {}) {
      const app = discoverApps().find((a) => a.service === name);
      if (!app) throw new Error(`unknown service ${name}`);
      const port = await freePort();
      // BENCH_CPU_PROF=<dir>: each service writes a V8 CPU profile there when it stops (read them
      // with `node bench/lib/cpuprofile-top.mjs <file>`).
      const profDir = process.env.BENCH_CPU_PROF;
      const nodeArgs = profDir
        ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profDir)}`, `--cpu-prof-name=${name}-${port}.cpuprofile`]
        : [];
      // BENCH_NODE_ARGS='<flags>': Node flags for each service (a runtime setting measured without changing the
      // service).
      if (process.env.BENCH_NODE_ARGS) nodeArgs.push(...process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean));
      const child = spawn(process.execPath, [...nodeArgs, app.main], {
        env: { ...process.env, ...env, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), ...extraEnv },
        stdio: [
          'ignore',
          fs.openSync(path.join(dir, `${name}-${port}.log`), 'a'),
          fs.openSync(path.join(dir, `${name}-${port}.log`), 'a'),
        ],
      });
      services.push(child);
      const url = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 300; i++) {
        try {
          if ((await fetch(`${url}/readyz`)).status === 200) {
            urls[name] = url;
            pids[pids[name] ? `${name}-${port}` : name] = child.pid;
            return { url, pid: child.pid };
          }
        } catch {}
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${name} did not become ready; see ${dir}/${name}-${port}.log`);
    },
    async bootstrap() {
      const app = discoverApps().find((a) => a.service === 'management-api');
      const out = await runNodeScript(app.bootstrap, { env: { ...process.env, ...env } });
      return JSON.parse(out.stdout.trim().split('\n').at(-1));
    },
    async stop() {
      forgetSignals();
      await stopAll();
      // BENCH_KEEP_LOGS=<dir>: the services' logs are copied there before the data goes.
      if (process.env.BENCH_KEEP_LOGS) {
        fs.mkdirSync(process.env.BENCH_KEEP_LOGS, { recursive: true });
        for (const f of fs.readdirSync(dir))
          if (f.endsWith('.log')) fs.copyFileSync(path.join(dir, f), path.join(process.env.BENCH_KEEP_LOGS, f));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
