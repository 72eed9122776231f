// The saturation phase: BURST events published at once and delivered as fast as the pipeline goes,
// with CPU per process, the worker's mean timings and, with --timeline, a per-100 ms timeline.
import os from 'node:os';
import { postmasterPid } from './cpu-use.mjs';
import { eventInfo } from './events.mjs';
import { BURST, NS, ROUNDS, TIMELINE, log, sleep } from './options.mjs';
import { bucketTimeline, formatTimeline, startTimeline } from './timeline.mjs';
import { workerTimings } from './worker-metrics.mjs';

const CONSUMER = 'webhook-worker';

/**
 * Polls the worker's consumer as JetStream sees it every 50 ms: events handed to the worker and
 * acknowledged so far, counted from the call. `stop()` ends the polling.
 */
async function watchConsumer(jsm) {
  const atStart = await jsm.consumers.info(`${NS}-events`, CONSUMER);
  const points = { handed: [], acked: [] };
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const info = await jsm.consumers.info(`${NS}-events`, CONSUMER).catch(() => null);
      if (info) {
        points.handed.push([Date.now(), info.delivered.consumer_seq - atStart.delivered.consumer_seq]);
        points.acked.push([Date.now(), info.ack_floor.consumer_seq - atStart.ack_floor.consumer_seq]);
      }
      await sleep(50);
    }
  })();
  return {
    points,
    stop: async () => {
      polling = false;
      await poll;
    },
  };
}

/** Publishes every event, 512 at a time; `publishedAt` gets each one's time with --timeline. */
async function publishAll(events, publish, publishedAt) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 512 }, async () => {
      while (next < events.length) {
        await publish(events[next++]);
        if (TIMELINE) publishedAt.push(Date.now());
      }
    }),
  );
}

/** The burst's rows per 100 ms and their means, printed; the `timeline` of the burst's figures. */
async function finishTimeline({ timeline, consumer, started, publishedAt, receivedAt }) {
  const { samples, others } = await timeline.stop();
  await consumer.stop();
  const rows = bucketTimeline(samples, { pub: publishedAt, recv: receivedAt }, started, consumer.points);
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
  const burstTimeline = {
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
  return burstTimeline;
}

/** Prints a burst's figures. */
function report({ cpuCores, cpuUsPerEvent, syscallsPerEvent, workerMeanMs: timings, ...result }) {
  const list = (figures) =>
    Object.entries(figures)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  log(`burst: CPU cores used: ${list(cpuCores)} (of ${os.cpus().length})`);
  log(
    `burst: CPU µs per event: ${list(cpuUsPerEvent)}; total ${Object.values(cpuUsPerEvent).reduce((a, b) => a + b, 0)}`,
  );
  log(`burst: read/write system calls per event: ${list(syscallsPerEvent)}`);
  log(
    `burst: worker means: attempt (POST and answer) ${timings.attempt} ms, job ${timings.job} ms (${timings.jobs} jobs), a job waiting for its log rows after its last attempt ${timings.logWrite} ms; event loop delay mean ${timings.eventLoopDelay.mean} ms, p99 ${timings.eventLoopDelay.p99} ms, max ${timings.eventLoopDelay.max} ms`,
  );
  log(
    `burst: ${result.delivered}/${BURST} delivered in ${result.seconds.toFixed(2)} s = ${result.eventsPerSecond} events/s (published in ${result.publishSeconds.toFixed(2)} s)`,
  );
}

/**
 * One burst of BURST events; resolves to its figures. Each burst is compared with the raw rounds
 * just before and after it (see main.mjs), so that a slow minute slows both sides of a ratio.
 */
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
  const consumer = TIMELINE ? await watchConsumer(jsm) : null;
  const burstCpu = startMeter();
  const started = Date.now();
  const publishedAt = [];
  await publishAll(events, publish, publishedAt);
  const publishedIn = (Date.now() - started) / 1000;
  const ok = await deliveries.waitFor(
    events.map((e) => e.id),
    180000,
  );
  const receivedAt = events.filter((e) => deliveries.received.has(e.id)).map((e) => deliveries.received.get(e.id).at);
  const seconds = (Math.max(...receivedAt) - started) / 1000;
  const delivered = receivedAt.length;
  const use = burstCpu.stop(delivered);
  const burstTimeline = timeline
    ? await finishTimeline({ timeline, consumer, started, publishedAt, receivedAt })
    : null;
  const figures = (pick) => Object.fromEntries(Object.entries(use).map(([k, v]) => [k, pick(v)]));
  const result = {
    events: BURST,
    delivered,
    allDelivered: ok,
    publishSeconds: +publishedIn.toFixed(2),
    seconds: +seconds.toFixed(2),
    eventsPerSecond: Math.round(delivered / seconds),
    cpuCores: figures((v) => +v.cores.toFixed(2)),
    cpuUsPerEvent: figures((v) => Math.round(v.usPerRequest)),
    syscallsPerEvent: figures((v) => +v.syscallsPerRequest.toFixed(2)),
    workerMeanMs: (await workerTimings(worker)).since(timingsBefore),
    ...(burstTimeline ? { timeline: burstTimeline } : {}),
  };
  report(result);
  return result;
}
