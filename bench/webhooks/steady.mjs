// The steady phase: RATE events/s for SECONDS after a warm-up, with event-to-delivery latencies.
import os from 'node:os';
import { eventInfo, percentile } from './events.mjs';
import { RATE, SECONDS, WARMUP_SECONDS, log, sleep } from './options.mjs';

/** Publishes `rate` events/s for `seconds`, calling `onEvent` for each; resolves to the number sent. */
async function paced(publish, seconds, rate, onEvent) {
  const tickMs = 10;
  const perTick = rate / (1000 / tickMs);
  const started = performance.now();
  let sent = 0;
  const pending = [];
  let i = 0;
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / tickMs + 1) * perTick);
    while (sent < due) {
      const e = eventInfo(i++);
      onEvent(e);
      pending.push(publish(e));
      sent++;
    }
    if (pending.length > 5000) await Promise.all(pending.splice(0));
    await sleep(tickMs);
  }
  await Promise.all(pending);
  return sent;
}

/** Warm-up, then the measured steady load; resolves to the figures of `results.steady`. */
export async function steadyLoad({ publish, deliveries, startMeter }) {
  log(`warm-up: ${WARMUP_SECONDS} s at ${RATE} events/s`);
  const warm = [];
  await paced(publish, WARMUP_SECONDS, RATE, (e) => warm.push(e.id));
  await deliveries.waitFor(warm, 30000);

  log(`steady: ${SECONDS} s at ${RATE} events/s`);
  const steady = [];
  const cpu = startMeter();
  const steadyStart = Date.now();
  const sent = await paced(publish, SECONDS, RATE, (e) => steady.push(e.id));
  const all = await deliveries.waitFor(steady, 60000);
  const lastAt = Math.max(
    ...steady.filter((id) => deliveries.received.has(id)).map((id) => deliveries.received.get(id).at),
  );
  const latencies = steady
    .filter((id) => deliveries.received.has(id))
    .map((id) => deliveries.received.get(id).latency)
    .sort((a, b) => a - b);
  const cpuUse = cpu.stop(latencies.length);
  const result = {
    offeredPerSecond: RATE,
    seconds: SECONDS,
    published: sent,
    delivered: latencies.length,
    allDelivered: all,
    deliveredPerSecond: Math.round(latencies.length / ((lastAt - steadyStart) / 1000)),
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: latencies.at(-1),
    },
    cpuCores: Object.fromEntries(Object.entries(cpuUse).map(([k, v]) => [k, +v.cores.toFixed(2)])),
    cpuUsPerEvent: Object.fromEntries(Object.entries(cpuUse).map(([k, v]) => [k, Math.round(v.usPerRequest)])),
  };
  log(
    `steady: CPU cores used: ${Object.entries(result.cpuCores)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} (of ${os.cpus().length})`,
  );
  log(
    `steady: ${latencies.length}/${sent} delivered, ${result.deliveredPerSecond} events/s; event-to-delivery p50 ${result.latencyMs.p50} ms, ` +
      `p90 ${result.latencyMs.p90} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms`,
  );
  return result;
}
