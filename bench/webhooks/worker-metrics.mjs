// What the webhook-worker's /metrics says about a phase: mean durations, and its counters at the end.

/**
 * Sums and counts of the worker's duration histograms (all label sets), for the mean time of an
 * attempt, a job and a log write during a phase: where a delivery's time goes when the CPU is not
 * the bound.
 */
export async function workerTimings(worker) {
  const text = await (await fetch(`${worker.url}/metrics`)).text();
  const total = (name) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(name) && (l[name.length] === ' ' || l[name.length] === '{'))
      .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  const names = {
    attempt: 'webhook_delivery_attempt_duration_seconds',
    job: 'webhook_delivery_job_seconds',
    logWrite: 'webhook_delivery_log_write_seconds',
  };
  const now = Object.fromEntries(
    Object.entries(names).map(([k, n]) => [k, { sum: total(`${n}_sum`), count: total(`${n}_count`) }]),
  );
  // prom-client's event loop delay figures cover the time since the previous scrape.
  const lag = (name) => +(1000 * total(`nodejs_eventloop_lag_${name}_seconds`)).toFixed(1);
  return {
    now,
    since(before) {
      const mean = (k) =>
        +((1000 * (now[k].sum - before.now[k].sum)) / Math.max(1, now[k].count - before.now[k].count)).toFixed(1);
      return {
        attempt: mean('attempt'),
        job: mean('job'),
        logWrite: mean('logWrite'),
        jobs: now.job.count - before.now.job.count,
        eventLoopDelay: { mean: lag('mean'), p99: lag('p99'), max: lag('max') },
      };
    },
  };
}

/** The worker's attempts, retries and BullMQ jobs so far. */
export async function workerCounters(worker) {
  const metrics = await (await fetch(`${worker.url}/metrics`)).text();
  const line = (name) =>
    metrics
      .split('\n')
      .find((l) => l.startsWith(name))
      ?.split(' ')
      .at(-1);
  // BullMQ jobs the worker ran (a job carries one delivery, or several of one webhook and channel).
  const jobs = Number(line('webhook_delivery_job_seconds_count'));
  return {
    attempts: Number(line('webhook_delivery_attempts_total')),
    retries: Number(line('webhook_delivery_retries_total') ?? 0),
    jobs,
    deliveriesPerJob: +(Number(line('webhook_delivery_attempts_total')) / jobs).toFixed(2),
  };
}
