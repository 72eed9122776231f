// The baseline: a raw BullMQ job round trip (add, process doing nothing, complete) on the same Redis.
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { eventInfo } from './events.mjs';
import { CONCURRENCY, log, RAW } from './options.mjs';

/** Runs RAW jobs through a fresh queue; resolves to { jobs, seconds, jobsPerSecond }. */
export async function rawBullmq(redisUrl, label) {
  const connection = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
  const qc = connection();
  const wc = connection();
  const name = `bench-raw-${label}`;
  const queue = new Queue(name, { connection: qc, prefix: 'rawbench' });
  const payload = eventInfo(0);
  let done = 0;
  let finished;
  const all = new Promise((r) => (finished = r));
  const rawWorker = new Worker(name, async () => 'ok', {
    connection: wc,
    prefix: 'rawbench',
    concurrency: CONCURRENCY,
    removeOnComplete: { count: 0 },
  });
  rawWorker.on('completed', () => {
    if (++done === RAW) finished();
  });
  await rawWorker.waitUntilReady();
  const started = performance.now();
  for (let i = 0; i < RAW; i += 500) {
    await queue.addBulk(
      Array.from({ length: Math.min(500, RAW - i) }, (_, k) => ({
        name: 'job',
        data: { ...payload, n: i + k },
        opts: { jobId: `raw-${i + k}`, removeOnComplete: true },
      })),
    );
  }
  await all;
  const seconds = (performance.now() - started) / 1000;
  await rawWorker.close();
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  qc.disconnect();
  wc.disconnect();
  const jobsPerSecond = Math.round(RAW / seconds);
  log(
    `raw BullMQ round trip (${label}): ${RAW} jobs in ${seconds.toFixed(2)} s = ${jobsPerSecond} jobs/s (concurrency ${CONCURRENCY})`,
  );
  return { jobs: RAW, seconds: +seconds.toFixed(2), jobsPerSecond };
}
