// Closed-loop HTTP load: `concurrency` keep-alive loops for `durationMs`, after a warm-up.
// Reports requests/s and latency percentiles. Non-2xx answers are counted as errors.
import http from 'node:http';

export async function loadTest({ url, headers = {}, concurrency = 32, durationMs = 10000, warmupMs = 2000 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const once = () =>
    new Promise((resolve) => {
      const started = process.hrtime.bigint();
      const req = http.request({ agent, hostname: target.hostname, port: target.port, path: target.pathname + target.search, method: 'GET', headers }, (res) => {
        res.resume();
        res.on('end', () => resolve({ ok: res.statusCode >= 200 && res.statusCode < 300, ns: Number(process.hrtime.bigint() - started) }));
      });
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
  const started = Date.now();
  const { latencies, errors } = await run(durationMs, true);
  const seconds = (Date.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] / 1e6 : NaN);
  return { requests: latencies.length, errors, rps: latencies.length / seconds, p50: pct(50), p99: pct(99) };
}

export function formatResult(name, r) {
  return `${name.padEnd(40)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   errors ${r.errors}`;
}
