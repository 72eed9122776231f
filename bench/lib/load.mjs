// Closed-loop HTTP load: `concurrency` keep-alive loops for `durationMs`, after a warm-up.
// Reports requests/s and latency percentiles. Non-2xx answers are counted as errors.
import { fork } from 'node:child_process';
import http from 'node:http';

/**
 * Runs the load in this process. `hooks.measuring(pid)` is called when the recorded run starts,
 * `hooks.measured(requests)` when it ends (CPU accounting, see cpu.mjs). With `keepLatencies`, the
 * result carries every latency (ms, sorted) so that several runs can be combined (`combine`).
 */
export async function loadTest(
  { url, headers = {}, concurrency = 32, durationMs = 10000, warmupMs = 2000, keepLatencies = false },
  hooks = {},
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const once = () =>
    new Promise((resolve) => {
      const started = process.hrtime.bigint();
      const req = http.request(
        {
          agent,
          hostname: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: 'GET',
          headers,
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              ok: res.statusCode >= 200 && res.statusCode < 300,
              ns: Number(process.hrtime.bigint() - started),
            }),
          );
        },
      );
      req.on('error', () => resolve({ ok: false, ns: Number(process.hrtime.bigint() - started) }));
      req.end();
    });
  const run = async (ms, record) => {
    const end = Date.now() + ms;
    const latencies = [];
    let errors = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < end) {
          const r = await once();
          if (!record) continue;
          if (r.ok) latencies.push(r.ns);
          else errors++;
        }
      }),
    );
    return { latencies, errors };
  };
  await run(warmupMs, false);
  hooks.measuring?.(process.pid);
  const started = Date.now();
  const { latencies, errors } = await run(durationMs, true);
  const seconds = (Date.now() - started) / 1000;
  hooks.measured?.(latencies.length);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] / 1e6 : NaN;
  return {
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50: pct(50),
    p99: pct(99),
    ...(keepLatencies ? { latencies: latencies.map((ns) => ns / 1e6) } : {}),
  };
}

/** One result of several runs of the same target (each with `keepLatencies`). */
export function combine(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const pct = (p) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] : NaN;
  return {
    requests,
    errors: runs.reduce((n, r) => n + r.errors, 0),
    seconds,
    rps: requests / seconds,
    p50: pct(50),
    p99: pct(99),
  };
}

export function formatResult(name, r) {
  return `${name.padEnd(40)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   errors ${r.errors}`;
}

/**
 * `loadTest` in a child process of its own (`load-worker.mjs`), so the load generator shares no
 * event loop with anything else the benchmark runs (the simulator, NATS clients).
 */
export function loadTestInChild(options, hooks = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./load-worker.mjs', import.meta.url), [JSON.stringify(options)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result;
    child.on('message', (m) => {
      if (m.measuring) return hooks.measuring?.(child.pid);
      result = m.result;
      hooks.measured?.(result.requests);
      // The child waits for this before exiting, so its CPU time could still be read.
      child.send('exit');
    });
    child.once('error', reject);
    child.once('exit', (code) => (result ? resolve(result) : reject(new Error(`load generator exited with ${code}`))));
  });
}

/** Starts `bare-server.mjs` (a bare Node HTTP server answering `body`) in its own process. */
export function startBareServer(body) {
  return startChildServer('./bare-server.mjs', [body]);
}

/** Starts `sync-echo-server.mjs` (a /sync server answering every frame at once) in its own process. */
export function startSyncEchoServer() {
  return startChildServer('./sync-echo-server.mjs', []);
}

function startChildServer(script, args) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(script, import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
    child.once('message', ({ port }) =>
      resolve({
        url: `http://127.0.0.1:${port}`,
        pid: child.pid,
        stop: () =>
          new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')))),
      }),
    );
  });
}
