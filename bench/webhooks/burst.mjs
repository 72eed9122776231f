// The saturation phase: BURST events published at once and delivered as fast as the pipeline goes,
// with CPU per process, the worker's mean timings and, with --timeline, a per-100 ms timeline.
import os from 'node:os';
import { postmasterPid } from './cpu-use.mjs';
import { eventInfo } from './events.mjs';
import { BURST, NS, ROUNDS, TIMELINE, log, sleep } from './options.mjs';
import { bucketTimeline, formatTimeline, startTimeline } from './timeline.mjs';
import { workerTimings } from './worker-metrics.mjs';

// ROUNDS times, each burst followed by a raw round: a burst is compared with the raw rounds just
// before and after it (the faster), so that a minute when the machine is slow for everyone slows
// both sides of a ratio; the ratio reported is the median of the rounds'.
export async function burst(round, { env, worker, jsm, publish, deliveries, startMeter }) {
  log(`burst ${round}/${ROUNDS}: ${BURST} events at once`);
  const events = Array.from({ length: BURST }, (_, i) => eventInfo(i));
  const timingsBefore = await workerTimings(worker);
  const timeline = TIMELINE
    ? startTimeline(
        {
          'webhook-worker': worker.pid,
          'redis-server': env.pids['redis-server'],
          'nats-server': env.pids['nats-server'],
          bench: process.pid,
        },
        { postmaster: postmasterPid(env), intervalMs: 100 },
      )
    : null;
  // The worker's consumer as JetStream sees it: events handed to the worker and acknowledged so far
  // (counted from here).
  const consumerName = 'webhook-worker';
  const consumerAtStart = TIMELINE ? await jsm.consumers.info(`${NS}-events`, consumerName) : null;
  const consumerPoints = { handed: [], acked: [] };
  let polling = TIMELINE;
  const consumerPoll = (async () => {
    while (polling) {
      const info = await jsm.consumers.info(`${NS}-events`, consumerName).catch(() => null);
      if (info) {
        consumerPoints.handed.push([Date.now(), info.delivered.consumer_seq - consumerAtStart.delivered.consumer_seq]);
        consumerPoints.acked.push([Date.now(), info.ack_floor.consumer_seq - consumerAtStart.ack_floor.consumer_seq]);
      }
      await sleep(50);
    }
  })();
  const burstCpu = startMeter();
  const started = Date.now();
  const publishedAt = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 512 }, async () => {
      while (next < events.length) {
        await publish(events[next++]);
        if (TIMELINE) publishedAt.push(Date.now());
      }
    }),
  );
  const publishedIn = (Date.now() - started) / 1000;
  const ok = await deliveries.waitFor(
    events.map((e) => e.id),
    180000,
  );
  const last = Math.max(
    ...events.filter((e) => deliveries.received.has(e.id)).map((e) => deliveries.received.get(e.id).at),
  );
  const seconds = (last - started) / 1000;
  const delivered = events.filter((e) => deliveries.received.has(e.id)).length;
  const use = burstCpu.stop(delivered);
  let burstTimeline = null;
  if (timeline) {
    const { samples, others } = await timeline.stop();
    polling = false;
    await consumerPoll;
    const rows = bucketTimeline(
      samples,
      {
        pub: publishedAt,
        recv: events.filter((e) => deliveries.received.has(e.id)).map((e) => deliveries.received.get(e.id).at),
      },
      started,
      consumerPoints,
    );
    // Idle cores beside threads queued for a core: capacity the pipeline's threads could not use. The
    // tail: the buckets after the worker acknowledged the last event (deliveries only).
    const mean = (list, pick) =>
      +(
        list.reduce((n, r) => n + pick(r) * r.ms, 0) /
        Math.max(
          1,
          list.reduce((n, r) => n + r.ms, 0),
        )
      ).toFixed(2);
    const tail = rows.filter((r) => r.acked === BURST);
    burstTimeline = {
      startedAt: started,
      rows,
      others,
      cores: { idle: mean(rows, (r) => r.machine.idle), waiting: mean(rows, (r) => r.waiting) },
      tailCores: { idle: mean(tail, (r) => r.machine.idle), waiting: mean(tail, (r) => r.waiting) },
    };
    log(
      `burst: on average ${burstTimeline.cores.idle} cores idle while the pipeline's threads waited for a CPU ${burstTimeline.cores.waiting} cores' worth of time; ` +
        `in the tail (${tail.length} buckets after the last acknowledgement) ${burstTimeline.tailCores.idle} idle, ${burstTimeline.tailCores.waiting} waiting`,
    );
    log(
      `burst: other processes that used CPU meanwhile: ${others.map((o) => `${o.name} (${o.pid}) ${o.cpuSeconds} s`).join(', ') || 'none'}`,
    );
    log(
      `burst timeline (100 ms buckets from the first publish: cores used by each process and in all, the machine's cores busy with other work, idle and stolen, and the time the pipeline's threads waited for a core; ` +
        `events handed to the worker and acknowledged by it so far; events published and deliveries received in the bucket):\n${formatTimeline(rows)}`,
    );
  }
  const cores = Object.fromEntries(Object.entries(use).map(([k, v]) => [k, +v.cores.toFixed(2)]));
  const usPerEvent = Object.fromEntries(Object.entries(use).map(([k, v]) => [k, Math.round(v.usPerRequest)]));
  const syscallsPerEvent = Object.fromEntries(
    Object.entries(use).map(([k, v]) => [k, +v.syscallsPerRequest.toFixed(2)]),
  );
  const timings = (await workerTimings(worker)).since(timingsBefore);
  const result = {
    events: BURST,
    delivered,
    allDelivered: ok,
    publishSeconds: +publishedIn.toFixed(2),
    seconds: +seconds.toFixed(2),
    eventsPerSecond: Math.round(delivered / seconds),
    cpuCores: cores,
    cpuUsPerEvent: usPerEvent,
    syscallsPerEvent,
    workerMeanMs: timings,
    ...(burstTimeline ? { timeline: burstTimeline } : {}),
  };
  log(
    `burst: CPU cores used: ${Object.entries(cores)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} (of ${os.cpus().length})`,
  );
  log(
    `burst: CPU µs per event: ${Object.entries(usPerEvent)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; total ${Object.values(usPerEvent).reduce((a, b) => a + b, 0)}`,
  );
  log(
    `burst: read/write system calls per event: ${Object.entries(syscallsPerEvent)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  log(
    `burst: worker means: attempt (POST and answer) ${timings.attempt} ms, job ${timings.job} ms (${timings.jobs} jobs), a job waiting for its log rows after its last attempt ${timings.logWrite} ms; event loop delay mean ${timings.eventLoopDelay.mean} ms, p99 ${timings.eventLoopDelay.p99} ms, max ${timings.eventLoopDelay.max} ms`,
  );
  log(
    `burst: ${delivered}/${BURST} delivered in ${seconds.toFixed(2)} s = ${result.eventsPerSecond} events/s (published in ${publishedIn.toFixed(2)} s)`,
  );
  return result;
}
