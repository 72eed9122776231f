/**
 * Nothing is lost when webhook-worker is killed, or Redis, PostgreSQL or NATS restarts, while
 * 10,000 events are in flight: every event reaches the receiver at least once, each (webhook,
 * event) is planned and queued once, and a delivery whose success was recorded is never sent again.
 * The only receipts twice are attempts that were on the wire when the worker process died (it never
 * learnt the answer), which is the at-least-once contract; the receiver can drop them by `webhook-id`.
 * Except after the kill (the dead process's deliveries come back once their lock expires, after
 * later ones), each channel's events also first reach the channel webhook in stream order.
 * PostgreSQL and NATS are servers of the test's own (the run's shared ones serve other suites),
 * crashed rather than stopped cleanly: PostgreSQL in immediate mode (recovery from its WAL at the
 * restart), nats-server killed.
 */
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName } from '@switchboard/contracts';
import {
  createTestDatabase,
  flushRedisPrefix,
  freePort,
  startNatsServer,
  startOwnPostgres,
  testNamespace,
  testServers,
  waitFor,
  type OwnNatsServer,
  type OwnPostgres,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { startRedis, stopServer } from '../../tools/stack/servers.mjs';
import {
  eventBus,
  eventInfo,
  fakeManagement,
  sql,
  startReceiver,
  startWorker,
  webhook,
  type EventBus,
  type Receiver,
} from './harness.js';

const EVENTS = 10_000;
const CONCURRENCY = 100;
const ORG = 'org-crash';
const SECRET = '<SHARED_SECRET>';

interface Run {
  ns: string;
  db: TestDatabase;
  nc: NatsConnection;
  bus: EventBus;
  receiver: Receiver;
  env: Record<string, string>;
  applicationId: string;
  eventIds: string[];
}

/** `natsUrl` and `db`: servers of the test's own instead of the run's shared NATS and a database of its PostgreSQL. */
async function setUp(label: string, redisUrl: string, own: { natsUrl?: string; db?: TestDatabase } = {}): Promise<Run> {
  const servers = testServers();
  const natsUrl = own.natsUrl ?? servers.natsUrl;
  const ns = testNamespace(label);
  const db = own.db ?? (await createTestDatabase(label));
  // The test's own connection rides out a restart of its own NATS like the services' do.
  const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  const bus = await eventBus(nc, ns);
  const receiver = await startReceiver();
  const management = fakeManagement(nc, ns);
  const applicationId = `app-${ns}`;
  management.apps.set(applicationId, {
    organizationId: ORG,
    sharedSecret: SECRET,
    webhooks: [webhook('app-hook', `${receiver.url}/app`, { reliable: true })],
    channels: {
      '*': {
        channelConfigId: 'cc',
        webhooks: [webhook('channel-hook', `${receiver.url}/channel`, { source: 'channel', reliable: true })],
      },
    },
  });
  const env = {
    NATS_URL: natsUrl,
    NATS_NAMESPACE: ns,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `${ns}:`,
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '20',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_RETRY_DELAY_MS: '200',
    WEBHOOK_EVENT_ACK_WAIT_MS: '2000',
    WEBHOOK_JOB_LOCK_MS: '2000',
    WEBHOOK_RECONCILE_AFTER_MS: '2000',
    WEBHOOK_RECONCILE_INTERVAL_MS: '500',
    WEBHOOK_BATCH_WINDOW_MS: '5',
    SHUTDOWN_TIMEOUT_MS: '5000',
    // At most SHUTDOWN_TIMEOUT_MS (the worker refuses more); the receiver answers at once.
    WEBHOOK_TIMEOUT_MS: '5000',
  };
  return { ns, db, nc, bus, receiver, env, applicationId, eventIds: [] };
}

/** `sharedRedisUrl`: the harness's Redis, whose keys of this run are deleted (an own Redis is just stopped). */
async function tearDown(run: Run | undefined, sharedRedisUrl: string | null): Promise<void> {
  if (!run) return;
  await run.receiver.close();
  await run.nc.close();
  if (sharedRedisUrl) await flushRedisPrefix(sharedRedisUrl, `${run.ns}:`);
  await run.db.drop();
}

/**
 * Publishes `count` events (half in 25 channels, half outside any) in the background; resolves with their stream
 * sequences.
 */
function publishAll(run: Run, count = EVENTS): Promise<Map<string, number>> {
  const items = Array.from({ length: count }, (_, i) => {
    const event = eventInfo(i % 2 === 0 ? 'channel.client.joined' : 'client.updated', run.applicationId, {
      channelId: i % 2 === 0 ? `room-${i % 50}` : null,
    });
    run.eventIds.push(event.id);
    return { applicationId: run.applicationId, organizationId: ORG, event };
  });
  return run.bus.publishMany(items, 256);
}

/**
 * The channels whose events did not first reach the channel webhook in stream order (the
 * contract's per-webhook order by channel); `seqs`: each event's stream sequence.
 */
function outOfOrderChannels(run: Run, seqs: ReadonlyMap<string, number>): string[] {
  const firstReceipt = new Map<string, number>();
  run.receiver
    .at('/channel')
    .forEach((r, n) => r.eventIds.forEach((id) => firstReceipt.has(id) || firstReceipt.set(id, n)));
  const byChannel = new Map<string, string[]>();
  run.eventIds.forEach((id, i) => {
    if (i % 2 === 0) byChannel.set(`room-${i % 50}`, [...(byChannel.get(`room-${i % 50}`) ?? []), id]);
  });
  return [...byChannel]
    .filter(([, ids]) => {
      const arrived = [...ids].sort((x, y) => firstReceipt.get(x)! - firstReceipt.get(y)!);
      return arrived.some((id, k) => k > 0 && seqs.get(id)! < seqs.get(arrived[k - 1]!)!);
    })
    .map(([channel]) => channel);
}

/**
 * Events the worker had not acknowledged yet: not in the stream yet, in the stream and not handed to
 * the worker's durable consumer, or handed over and not acknowledged (their intake is still to come).
 */
async function notAcknowledged(run: Run): Promise<number> {
  const jsm = await jetstreamManager(run.nc);
  const [stream, consumer] = await Promise.all([
    jsm.streams.info(eventStreamName(run.ns)),
    jsm.consumers.info(eventStreamName(run.ns), 'webhook-worker'),
  ]);
  return run.eventIds.length - stream.state.messages + consumer.num_pending + consumer.num_ack_pending;
}

/**
 * A server under the worker goes down once `deliveries` requests were made, while events are still to
 * be taken in, and comes back 1.5 s later; then every event reaches its webhooks, none twice, and
 * each channel's events first reach the channel webhook in stream order.
 */
async function survivesOutage(
  run: Run,
  what: string,
  options: {
    deliveries: number;
    publishing: Promise<Map<string, number>>;
    down: () => Promise<void>;
    up: () => Promise<void>;
  },
): Promise<void> {
  await waitFor(() => run.receiver.requests.length >= options.deliveries, {
    timeoutMs: 60000,
    intervalMs: 10,
    description: `the first ${options.deliveries} deliveries`,
  });
  const backlog = await notAcknowledged(run);
  await options.down();
  const downAt = Date.now();
  const delivered = run.receiver.requests.length;
  await new Promise((r) => setTimeout(r, 1500));
  await options.up();
  const seqs = await options.publishing;
  await waitForAll(run, 90000);
  await new Promise((r) => setTimeout(r, 3000));
  expect(backlog).toBeGreaterThan(0);
  const { duplicates } = await checkInvariants(run, downAt, { maxDuplicates: 0 });
  expect(outOfOrderChannels(run, seqs)).toEqual([]);
  process.stdout.write(
    `${what} test: ${backlog} events not yet acknowledged and ${delivered} requests made when it went down, ${duplicates} receipts twice\n`,
  );
}

/** Every event at both webhooks (the channel webhook gets the events in a channel). */
async function waitForAll(run: Run, timeoutMs: number): Promise<void> {
  const wantApp = new Set(run.eventIds);
  const wantChannel = new Set(run.eventIds.filter((_, i) => i % 2 === 0));
  await waitFor(
    () => {
      const app = new Set(run.receiver.at('/app').flatMap((r) => r.eventIds));
      const channel = new Set(run.receiver.at('/channel').flatMap((r) => r.eventIds));
      return app.size === wantApp.size && channel.size === wantChannel.size;
    },
    { timeoutMs, intervalMs: 250, description: `all ${run.eventIds.length} events at both webhooks` },
  );
}

/**
 * The invariants after a disruption at `disruptedAt`:
 * - every event reached its webhooks (checked by waitForAll);
 * - nothing else arrived (no unknown ids), each delivery planned once and finished as a success
 *   with exactly one successful attempt logged;
 * - an event reaching a webhook twice was first sent before the disruption (in flight when the
 *   worker died); there are at most as many as deliveries can be in progress at once.
 */
async function checkInvariants(
  run: Run,
  disruptedAt: number,
  options: { maxDuplicates: number },
): Promise<{ duplicates: number }> {
  let duplicates = 0;
  for (const [p, want] of [
    ['/app', run.eventIds],
    ['/channel', run.eventIds.filter((_, i) => i % 2 === 0)],
  ] as const) {
    const receipts = new Map<string, number[]>();
    for (const r of run.receiver.at(p))
      for (const id of r.eventIds) receipts.set(id, [...(receipts.get(id) ?? []), r.at]);
    expect(new Set(receipts.keys())).toEqual(new Set(want));
    for (const [, at] of receipts) {
      if (at.length === 1) continue;
      duplicates++;
      expect(at.length).toBe(2);
      expect(at[0]).toBeLessThanOrEqual(disruptedAt + 50);
    }
  }
  expect(duplicates).toBeLessThanOrEqual(options.maxDuplicates);

  const perWebhook = await sql<{
    webhook_id: string;
    deliveries: number;
    events: number;
    pending: number;
    failed: number;
  }>(
    run.db.url,
    `SELECT webhook_id, count(*)::int AS deliveries, count(DISTINCT event_ids[1])::int AS events,
            count(*) FILTER (WHERE state = 'pending')::int AS pending, count(*) FILTER (WHERE state = 'failed')::int AS failed
     FROM webhook.delivery GROUP BY webhook_id ORDER BY webhook_id`,
  );
  const n = run.eventIds.length;
  expect(perWebhook).toEqual([
    { webhook_id: 'app-hook', deliveries: n, events: n, pending: 0, failed: 0 },
    { webhook_id: 'channel-hook', deliveries: n / 2, events: n / 2, pending: 0, failed: 0 },
  ]);
  const successes = await sql<{ n: number; deliveries: number }>(
    run.db.url,
    `SELECT n, count(*)::int AS deliveries FROM (SELECT delivery_id, count(*) FILTER (WHERE success)::int AS n FROM webhook.delivery_attempt GROUP BY delivery_id) s GROUP BY n`,
  );
  expect(successes).toEqual([{ n: 1, deliveries: n + n / 2 }]);
  const processed = await sql<{ n: number }>(run.db.url, `SELECT count(*)::int AS n FROM webhook.processed_event`);
  expect(processed[0]!.n).toBe(n);
  return { duplicates };
}

describe('webhook-worker under failure', () => {
  const servers = testServers();

  describe('killed with SIGKILL while 10,000 events are in flight', () => {
    let run: Run | undefined;
    let worker: SpawnedService | undefined;

    afterAll(async () => {
      await worker?.stop('SIGKILL');
      await tearDown(run, servers.redisUrl);
    });

    it('loses nothing and never sends a delivery again once its success was recorded', async () => {
      run = await setUp('crash', servers.redisUrl);
      worker = await startWorker(run.env);
      const publishing = publishAll(run);
      await waitFor(() => run!.receiver.requests.length >= 4000, {
        timeoutMs: 60000,
        intervalMs: 10,
        description: 'the first 4000 deliveries',
      });
      await worker.stop('SIGKILL');
      const killedAt = Date.now();
      const deliveredBeforeKill = run.receiver.requests.length;
      worker = await startWorker(run.env);
      await publishing;
      await waitForAll(run, 90000);
      await new Promise((r) => setTimeout(r, 3000)); // late duplicates would show up within lock + ack wait
      const { duplicates } = await checkInvariants(run, killedAt, { maxDuplicates: CONCURRENCY });
      expect(deliveredBeforeKill).toBeLessThan(EVENTS * 1.5);
      process.stdout.write(
        `kill test: ${deliveredBeforeKill} requests before the kill, ${duplicates} receipts twice (in flight at the kill)\n`,
      );
    }, 120000);
  });

  describe('stopped with SIGTERM while events are in flight', () => {
    let run: Run | undefined;
    let worker: SpawnedService | undefined;

    afterAll(async () => {
      await worker?.stop('SIGKILL');
      await tearDown(run, servers.redisUrl);
    });

    it('stops fetching and starting deliveries, finishes the attempts in flight, hands the rest back, exits 0; the next start delivers the rest, nothing twice', async () => {
      run = await setUp('sigterm', servers.redisUrl);
      worker = await startWorker(run.env);
      const publishing = publishAll(run, 4000);
      await waitFor(() => run!.receiver.requests.length >= 1500, {
        timeoutMs: 60000,
        intervalMs: 10,
        description: 'the first 1500 deliveries',
      });
      const atSignal = run.receiver.requests.length;
      const exit = await worker.stop('SIGTERM', 15000);
      const stoppedAt = Date.now();
      expect(exit).toEqual({ code: 0, signal: null });
      await new Promise((r) => setTimeout(r, 500));
      // The attempts in flight (at most CONCURRENCY) and those started before the signal was handled,
      // not the thousands of deliveries the jobs in progress hold: those went back to the queue.
      const afterSignal = run.receiver.requests.length - atSignal;
      process.stdout.write(`sigterm test: ${afterSignal} requests after the signal\n`);
      expect(afterSignal).toBeLessThan(1000);
      worker = await startWorker(run.env);
      await publishing;
      await waitForAll(run, 60000);
      await new Promise((r) => setTimeout(r, 2500));
      const { duplicates } = await checkInvariants(run, stoppedAt, { maxDuplicates: 0 });
      expect(duplicates).toBe(0);
      // The deliveries handed back go out before later ones of their channels.
      expect(outOfOrderChannels(run, await publishing)).toEqual([]);
    }, 90000);
  });

  describe('Redis restarted while 10,000 events are in flight', () => {
    let run: Run | undefined;
    let worker: SpawnedService | undefined;
    let redis: { pid: number; url: string } | undefined;
    let redisDir: string;

    afterAll(async () => {
      await worker?.stop();
      if (redis) await stopServer('redis', redis.pid, { dataDir: redisDir }).catch(() => undefined);
      await tearDown(run, null);
    });

    it('loses nothing and sends nothing twice', async () => {
      const port = await freePort();
      // One level down in a directory of its own: the launcher keeps the pid file beside the data
      // directory, and the run's shared Redis keeps its own in the run's data directory.
      redisDir = path.join(servers.dataDir, `webhooks-redis-${port}`, 'data');
      const logFile = path.join(servers.dataDir, 'logs', `redis-webhooks-${port}.log`);
      redis = await startRedis({ port, dataDir: redisDir, logFile, persist: true });
      run = await setUp('redisrestart', redis.url);
      worker = await startWorker(run.env);
      const publishing = publishAll(run);
      await waitFor(() => run!.receiver.requests.length >= 4000, {
        timeoutMs: 60000,
        intervalMs: 10,
        description: 'the first 4000 deliveries',
      });
      // A clean stop writes the append-only file; the restart replays it.
      await stopServer('redis', redis.pid, { dataDir: redisDir });
      const stoppedAt = Date.now();
      await new Promise((r) => setTimeout(r, 1500));
      redis = await startRedis({ port, dataDir: redisDir, logFile, persist: true });
      await publishing;
      await waitForAll(run, 90000);
      await new Promise((r) => setTimeout(r, 3000));
      const { duplicates } = await checkInvariants(run, stoppedAt, { maxDuplicates: 0 });
      expect(outOfOrderChannels(run, await publishing)).toEqual([]);
      process.stdout.write(`redis restart test: ${duplicates} receipts twice\n`);
    }, 120000);
  });

  describe('PostgreSQL crashed and restarted while 10,000 events are in flight', () => {
    let run: Run | undefined;
    let worker: SpawnedService | undefined;
    let postgres: OwnPostgres | undefined;

    afterAll(async () => {
      await worker?.stop();
      await tearDown(run, servers.redisUrl);
      await postgres?.stop();
    });

    it('loses nothing and sends nothing twice', async () => {
      postgres = await startOwnPostgres('webhooks');
      run = await setUp('pgrestart', servers.redisUrl, {
        db: await postgres.createDatabase('webhooks', ['webhook-worker']),
      });
      worker = await startWorker(run.env);
      // Early enough that events are still to be taken in (their intake transactions fail, and
      // attempts already made wait to be logged).
      await survivesOutage(run, 'postgres crash', {
        deliveries: 1000,
        publishing: publishAll(run),
        down: () => postgres!.crash(),
        up: () => postgres!.start(),
      });
    }, 150000);
  });

  describe('NATS killed and restarted while 10,000 events are in flight', () => {
    let run: Run | undefined;
    let worker: SpawnedService | undefined;
    let nats: OwnNatsServer | undefined;

    afterAll(async () => {
      await worker?.stop();
      await tearDown(run, servers.redisUrl);
      await nats?.stop();
    });

    it('loses no event JetStream accepted and sends nothing twice', async () => {
      nats = await startNatsServer();
      run = await setUp('natsrestart', servers.redisUrl, { natsUrl: nats.url });
      worker = await startWorker(run.env);
      // Every event is in the stream (acknowledged by JetStream) before the kill: those are the ones
      // that must not be lost. The worker is still taking them in and delivering them.
      const seqs = await publishAll(run);
      await survivesOutage(run, 'nats kill', {
        deliveries: 500,
        publishing: Promise.resolve(seqs),
        down: () => nats!.kill(),
        up: () => nats!.start(),
      });
    }, 150000);
  });
});
