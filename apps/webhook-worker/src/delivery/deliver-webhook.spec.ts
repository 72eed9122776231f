import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Metrics } from '@switchboard/service-kit';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { loadWebhookWorkerConfig } from '../config.js';
import type { DeliveryLogWriter } from '../log/delivery-log.writer.js';
import type { AttemptRow, DeliveryRepository, DeliveryState } from '../log/delivery.repository.js';
import type { WebhookResolver } from '../matching/webhook-resolver.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { DeliverWebhook, deliveryBody, orderingKey, retryable } from './deliver-webhook.js';
import type { DeliveryItem, DeliveryJobData, DeliveryQueue } from './delivery-queue.js';

describe('DeliverWebhook', () => {
  let server: http.Server;
  let url: string;
  let status = 200;
  /** Statuses answered before `status`, one per request. */
  const answers: number[] = [];
  let requests: http.IncomingHttpHeaders[] = [];
  const states = new Map<string, DeliveryState>();
  const rows: AttemptRow[] = [];
  let resolve: WebhookResolver['resolve'];

  const config = loadWebhookWorkerConfig({
    NATS_URL: 'nats://127.0.0.1:4222',
    REDIS_URL: 'redis://127.0.0.1:6379',
    DATABASE_URL: 'postgres://u@127.0.0.1/db',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_TIMEOUT_MS: '1000',
  });
  const repository = {
    pendingAttempts: async (ids: string[]) =>
      new Map(
        ids
          .filter((id) => (states.get(id) ?? 'pending') === 'pending')
          .map((id) => [id, Math.max(0, ...rows.filter((r) => r.deliveryId === id).map((r) => r.attempt))]),
      ),
  } as unknown as DeliveryRepository;
  const log = {
    record: async (row: AttemptRow) => {
      rows.push(row);
      if (row.final) states.set(row.deliveryId, row.success ? 'succeeded' : 'failed');
    },
    expedite: () => undefined,
  } as unknown as DeliveryLogWriter;
  const resolver = { resolve: (a: string, c: string | null) => resolve(a, c) } as unknown as WebhookResolver;
  const added: Array<{ jobs: DeliveryJobData[]; delayMs: number }> = [];
  const queue = {
    inProgress: async () => false,
    addAll: async (jobs: DeliveryJobData[], delayMs = 0) => {
      added.push({ jobs, delayMs });
    },
    retryDelay: (attempt: number) => 100 * 2 ** (attempt - 1),
  } as unknown as DeliveryQueue;
  const deliver = new DeliverWebhook(config, resolver, repository, log, new WebhookMetrics(new Metrics('test')), queue);

  /** Set: requests are answered only when their release is called (in `held`, in arrival order). */
  let gate: Array<() => void> | null = null;
  /** Statuses by webhook-id, before `answers` and `status`. */
  const statusById = new Map<string, number>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    req.on('end', () => {
      requests.push(req.headers);
      const answer = () => {
        res.writeHead(statusById.get(String(req.headers['webhook-id'])) ?? answers.shift() ?? status);
        res.end();
      };
      if (gate) gate.push(answer);
      else answer();
    });
  };

  beforeAll(async () => {
    server = http.createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    deliver.sender.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  let n = 0;
  beforeEach(() => {
    status = 200;
    requests = [];
    rows.length = 0;
    added.length = 0;
    answers.length = 0;
    statusById.clear();
    gate = null;
    resolve = async () => ({ organizationId: 'org-1', sharedSecret: 's3cret', channelConfigId: null, webhooks: [] });
  });

  const item = (over: Partial<DeliveryItem> = {}): DeliveryItem => ({
    deliveryId: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    events: [
      {
        id: `e${n}`,
        timestamp: Date.now(),
        origin: 'client',
        type: 'channel.activated',
        forced: false,
        channel: null,
        client: null,
        connection: null,
        message: null,
      },
    ],
    order: n,
    attemptOffset: 0,
    replayOf: null,
    ...over,
  });
  const data = (over: Partial<DeliveryJobData> = {}, first: Partial<DeliveryItem> = {}): DeliveryJobData => ({
    webhookId: 'w1',
    source: 'application',
    url,
    batch: false,
    reliable: true,
    organizationId: 'org-1',
    applicationId: 'app-1',
    channelId: 'room-1',
    deliveries: [item(first)],
    prev: 0,
    prevJobId: null,
    ...over,
  });
  const one = (d: DeliveryJobData) => d.deliveries[0]!;
  const job = (
    d: DeliveryJobData,
    over: { attemptsMade?: number; stalledCounter?: number; attempts?: number } = {},
  ) => {
    const delayed: unknown[][] = [];
    const moveToDelayed = async (...args: unknown[]) => {
      delayed.push(args);
    };
    const updated: DeliveryJobData[] = [];
    const updateData = async (next: DeliveryJobData) => {
      updated.push(next);
    };
    const j = {
      data: d,
      attemptsMade: over.attemptsMade ?? 0,
      stalledCounter: over.stalledCounter ?? 0,
      opts: { attempts: over.attempts ?? (d.reliable && d.deliveries.length === 1 ? 3 : 1) },
      moveToDelayed,
      delayed,
      updateData,
      updated,
    };
    return j as unknown as Job<DeliveryJobData> & { delayed: unknown[][]; updated: DeliveryJobData[] };
  };

  it('a 2xx is delivered and logged as the final, successful attempt 1, with the signature headers', async () => {
    const d = data();
    await expect(deliver.run(job(d), 'token')).resolves.toBe('delivered');
    expect(rows).toEqual([
      expect.objectContaining({
        deliveryId: one(d).deliveryId,
        attempt: 1,
        statusCode: 200,
        success: true,
        final: true,
        error: null,
      }),
    ]);
    expect(requests[0]).toEqual(
      expect.objectContaining({
        'content-type': 'application/json',
        'webhook-id': one(d).deliveryId,
        'x-applicationsignature': expect.any(String),
        'webhook-signature': expect.stringMatching(/^v1,/),
      }),
    );
  });

  it('a 5xx of a reliable webhook throws a plain error while attempts are left, then an unrecoverable one', async () => {
    status = 503;
    const d = data();
    await expect(deliver.run(job(d), 't')).rejects.not.toBeInstanceOf(UnrecoverableError);
    await expect(deliver.run(job(d, { attemptsMade: 1 }), 't')).rejects.toThrow(/attempt 2 .* HTTP 503/);
    await expect(deliver.run(job(d, { attemptsMade: 2 }), 't')).rejects.toBeInstanceOf(UnrecoverableError);
    expect(rows.map((r) => [r.attempt, r.final])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    // Once failed for good, a late run of the job sends nothing.
    await expect(deliver.run(job(d, { stalledCounter: 1 }), 't')).resolves.toBe('skipped');
    expect(requests).toHaveLength(3);
  });

  it('a 4xx, or any failure of a webhook that is not reliable, is final at once', async () => {
    status = 404;
    await expect(deliver.run(job(data()), 't')).rejects.toBeInstanceOf(UnrecoverableError);
    status = 500;
    await expect(deliver.run(job(data({ reliable: false })), 't')).rejects.toBeInstanceOf(UnrecoverableError);
    expect(rows.map((r) => [r.statusCode, r.final])).toEqual([
      [404, true],
      [500, true],
    ]);
  });

  it('a job queued again continues the attempt count of its delivery', async () => {
    status = 502;
    const d = data({ recovered: true }, { attemptOffset: 2 });
    await expect(deliver.run(job(d, { attempts: 1 }), 't')).rejects.toBeInstanceOf(UnrecoverableError);
    expect(rows).toEqual([expect.objectContaining({ attempt: 3, final: true })]);
  });

  it('a job run again after its delivery succeeded sends nothing', async () => {
    const d = data();
    await deliver.run(job(d), 't');
    await expect(deliver.run(job(d, { stalledCounter: 1 }), 't')).resolves.toBe('skipped');
    states.set('elsewhere', 'succeeded');
    await expect(deliver.run(job(data({ recovered: true }, { deliveryId: 'elsewhere' })), 't')).resolves.toBe(
      'skipped',
    );
    expect(requests).toHaveLength(1);
  });

  it('waits without using an attempt while the secret cannot be read; an unknown application is a final failure', async () => {
    resolve = async () => {
      throw new Error('no responders');
    };
    const j = job(data());
    await expect(deliver.run(j, 'tok')).rejects.toBeInstanceOf(DelayedError);
    expect(j.delayed).toEqual([[expect.any(Number), 'tok']]);
    expect(rows).toEqual([]);
    resolve = async () => null;
    await expect(deliver.run(job(data()), 't')).rejects.toBeInstanceOf(UnrecoverableError);
    expect(rows).toEqual([
      expect.objectContaining({ success: false, final: true, error: 'application app-1 is unknown' }),
    ]);
    expect(requests).toHaveLength(0);
  });
  it('a job of several deliveries sends them one after the other, in order, each with its own webhook-id, and completes once all are logged', async () => {
    const d = data({}, {});
    d.deliveries.push(item(), item());
    await expect(deliver.run(job(d), 't')).resolves.toBe('delivered');
    expect(requests.map((h) => h['webhook-id'])).toEqual(d.deliveries.map((x) => x.deliveryId));
    expect(rows.map((r) => [r.deliveryId, r.attempt, r.final, r.success])).toEqual(
      d.deliveries.map((x) => [x.deliveryId, 1, true, true]),
    );
    expect(added).toEqual([]);
  });

  it('a job of several hands a delivery to be retried to a job of its own (delayed by the backoff, attempt count continued) and completes', async () => {
    const d = data();
    d.deliveries.push(item());
    // The first delivery gets a 503, the second a 200.
    answers.push(503);
    await expect(deliver.run(job(d), 't')).resolves.toBe('delivered');
    expect(rows.map((r) => [r.deliveryId, r.attempt, r.final, r.statusCode])).toEqual([
      [d.deliveries[0]!.deliveryId, 1, false, 503],
      [d.deliveries[1]!.deliveryId, 1, true, 200],
    ]);
    expect(added).toEqual([
      {
        jobs: [expect.objectContaining({ deliveries: [{ ...d.deliveries[0]!, attemptOffset: 1 }], recovered: true })],
        delayMs: 100,
      },
    ]);
    // The retry job (one delivery, 2 attempts left) makes attempt 2, and checks the delivery is pending first.
    const retry = added[0]!.jobs[0]!;
    await expect(deliver.run(job(retry, { attempts: 2 }), 't')).resolves.toBe('delivered');
    expect(rows.at(-1)).toEqual(
      expect.objectContaining({ deliveryId: d.deliveries[0]!.deliveryId, attempt: 2, final: true, success: true }),
    );
  });

  it('with every place for deliveries sent and not yet logged taken (WEBHOOK_CONCURRENCY), the next delivery waits for a row to be committed and asks the log writer to write at once', async () => {
    const held: Array<() => void> = [];
    let expedited = 0;
    const slowLog = {
      record: (row: AttemptRow) =>
        new Promise<void>((r) =>
          held.push(() => {
            rows.push(row);
            r();
          }),
        ),
      expedite: () => void expedited++,
    } as unknown as DeliveryLogWriter;
    const narrow = new DeliverWebhook(
      { ...config, concurrency: 1 },
      resolver,
      repository,
      slowLog,
      new WebhookMetrics(new Metrics('test')),
      queue,
    );
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      const d = data();
      d.deliveries.push(item());
      const run = narrow.run(job(d), 't');
      await until(() => held.length === 1 && expedited === 1);
      // The first delivery is sent and its row not committed: the second waits, and the writer is told.
      expect(requests).toHaveLength(1);
      expect(expedited).toBe(1);
      held.shift()!();
      await until(() => held.length === 1);
      expect(requests.map((h) => h['webhook-id'])).toEqual(d.deliveries.map((x) => x.deliveryId));
      held.shift()!();
      await expect(run).resolves.toBe('delivered');
      // A place was free for the first delivery: only the second one waited.
      expect(expedited).toBe(1);
    } finally {
      narrow.sender.close();
    }
  });

  it('sends the lanes of a job (one per channel) concurrently, each in stream order, and holds a lane back while the same channel of an earlier job is in progress', async () => {
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    };
    const ids = () => requests.map((h) => h['webhook-id']);
    gate = [];
    const released = gate;
    const first = data({ channelId: 'room-1' });
    const [a1] = first.deliveries;
    const running = deliver.run(job(first), 't');
    await until(() => requests.length === 1);
    // Job 2: room-1 after a1 (queued just before it, still in progress), room-2 twice, then room-1 again.
    const second = data({ channelId: 'room-1' }, { prev: a1!.order, prevJobId: 'job-1' });
    second.deliveries.push(item({ channelId: 'room-2' }), item({ channelId: 'room-2' }), item());
    const [a2, b1, b2, a3] = second.deliveries;
    const next = deliver.run(job(second), 't');
    await until(() => requests.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    // room-2 started at once; room-1 waits for a1; b2 waits for b1.
    expect(ids()).toEqual([a1!.deliveryId, b1!.deliveryId]);
    released.shift()!();
    await until(() => requests.length === 3);
    await new Promise((r) => setTimeout(r, 20));
    expect(ids()).toEqual([a1!.deliveryId, b1!.deliveryId, a2!.deliveryId]);
    gate = null;
    released.splice(0).forEach((answer) => answer());
    await expect(running).resolves.toBe('delivered');
    await expect(next).resolves.toBe('delivered');
    const order = ids();
    expect(order.indexOf(a2!.deliveryId)).toBeLessThan(order.indexOf(a3!.deliveryId));
    expect(order.indexOf(b1!.deliveryId)).toBeLessThan(order.indexOf(b2!.deliveryId));
    expect(rows.map((r) => r.deliveryId).sort()).toEqual([a1, a2, b1, b2, a3].map((x) => x!.deliveryId).sort());
  });

  it('a job held up reading its secret keeps its place on its channel: a later job of the channel, naming no predecessor, waits for it', async () => {
    // After a NATS outage the secret's lookup waits for management-api (up to the request timeout),
    // and a job of the same channel queued more than PREDECESSOR_MEMORY_MS later names no predecessor.
    let answerLookup: (() => void) | undefined;
    const lookup = new Promise<void>((r) => (answerLookup = r));
    const configuration = { organizationId: 'org-1', sharedSecret: 's3cret', channelConfigId: null, webhooks: [] };
    resolve = async () => {
      await lookup;
      return configuration;
    };
    const earlier = data({ channelId: 'room-1' });
    const running = deliver.run(job(earlier), 't');
    await new Promise((r) => setTimeout(r, 20));
    // The lookup is answered from the cache by now for the later job.
    resolve = async () => configuration;
    const later = data({ channelId: 'room-1' });
    const next = deliver.run(job(later), 't');
    await new Promise((r) => setTimeout(r, 50));
    expect(requests).toHaveLength(0);
    answerLookup!();
    await expect(running).resolves.toBe('delivered');
    await expect(next).resolves.toBe('delivered');
    expect(requests.map((h) => h['webhook-id'])).toEqual([one(earlier).deliveryId, one(later).deliveryId]);
  });

  it('a delivery in another channel than the job is retried in a job of its own, with its channel', async () => {
    const d = data({ channelId: 'room-1' });
    d.deliveries.push(item({ channelId: 'room-2' }));
    const b = d.deliveries[1]!;
    statusById.set(b.deliveryId, 503);
    await expect(deliver.run(job(d), 't')).resolves.toBe('delivered');
    expect(added).toHaveLength(1);
    const retry = added[0]!.jobs[0]!;
    expect(retry).toEqual(expect.objectContaining({ channelId: 'room-2', prev: 0, prevJobId: null, recovered: true }));
    expect(retry.deliveries).toEqual([
      { deliveryId: b.deliveryId, events: b.events, order: b.order, attemptOffset: 1, replayOf: null },
    ]);
  });

  describe('stopping (stopSending)', () => {
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    };
    let stopper: DeliverWebhook;
    beforeEach(() => {
      stopper = new DeliverWebhook(config, resolver, repository, log, new WebhookMetrics(new Metrics('test')), queue);
    });
    afterEach(() => stopper.sender.close());

    it('a job of several finishes the attempt in flight, hands its retry off, and goes back to the queue with only the deliveries not attempted', async () => {
      gate = [];
      const released = gate;
      const d = data();
      d.deliveries.push(item(), item(), item());
      const [first, ...rest] = d.deliveries;
      statusById.set(first!.deliveryId, 503);
      const j = job(d);
      const run = stopper.run(j, 'tok');
      await until(() => requests.length === 1);
      stopper.stopSending();
      released.shift()!();
      await expect(run).rejects.toBeInstanceOf(DelayedError);
      // The attempt in flight was logged and its retry handed off (backoff) before the job went back.
      expect(rows).toEqual([
        expect.objectContaining({ deliveryId: first!.deliveryId, attempt: 1, statusCode: 503, final: false }),
      ]);
      expect(added).toEqual([
        {
          jobs: [expect.objectContaining({ deliveries: [{ ...first!, attemptOffset: 1 }], recovered: true })],
          delayMs: 100,
        },
      ]);
      expect(j.updated).toEqual([{ ...d, deliveries: rest, recovered: true }]);
      expect(j.delayed).toEqual([[expect.any(Number), 'tok']]);
      expect(requests).toHaveLength(1);
      // Its next run (any replica) checks them in PostgreSQL and sends only those.
      const again = new DeliverWebhook(
        config,
        resolver,
        repository,
        log,
        new WebhookMetrics(new Metrics('test')),
        queue,
      );
      try {
        gate = null;
        await expect(again.run(job(j.updated[0]!), 't')).resolves.toBe('delivered');
        expect(requests.slice(1).map((h) => h['webhook-id'])).toEqual(rest.map((x) => x.deliveryId));
      } finally {
        again.sender.close();
      }
    });

    it('the one delivery left of a job of several goes in a job of its own; a job of one not started goes back whole', async () => {
      gate = [];
      const released = gate;
      const d = data();
      d.deliveries.push(item());
      const j = job(d);
      const run = stopper.run(j, 't');
      await until(() => requests.length === 1);
      stopper.stopSending();
      released.shift()!();
      await expect(run).resolves.toBe('delivered');
      expect(added).toEqual([
        {
          jobs: [expect.objectContaining({ deliveries: [{ ...d.deliveries[1]!, attemptOffset: 0 }], recovered: true })],
          delayMs: 0,
        },
      ]);
      expect(j.updated).toEqual([]);

      const single = job(data());
      await expect(stopper.run(single, 't')).rejects.toBeInstanceOf(DelayedError);
      expect(single.updated).toEqual([{ ...single.data, recovered: true }]);
      expect(single.delayed).toHaveLength(1);
      expect(requests).toHaveLength(1);
    });
  });

  it('a job of several run again sends only the deliveries still pending, continuing their attempt count', async () => {
    const d = data();
    d.deliveries.push(item(), item());
    const [a, b, c] = d.deliveries;
    states.set(a!.deliveryId, 'succeeded');
    rows.push({ deliveryId: b!.deliveryId, attempt: 1 } as AttemptRow);
    await expect(deliver.run(job(d, { stalledCounter: 1 }), 't')).resolves.toBe('delivered');
    expect(requests.map((h) => h['webhook-id'])).toEqual([b!.deliveryId, c!.deliveryId]);
    expect(rows.slice(1).map((r) => [r.deliveryId, r.attempt])).toEqual([
      [b!.deliveryId, 2],
      [c!.deliveryId, 1],
    ]);
  });
});

describe('delivery helpers', () => {
  const ev = (id: string, client: string | null) => ({ id, client: client ? { id: client } : null }) as never;
  it('orders by webhook and channel, else client, else not at all', () => {
    expect(orderingKey({ webhookId: 'w', channelId: 'c', events: [ev('e', 'k')] })).toBe('w\u0000channel:c');
    expect(orderingKey({ webhookId: 'w', channelId: null, events: [ev('e', 'k')] })).toBe('w\u0000client:k');
    expect(orderingKey({ webhookId: 'w', channelId: null, events: [ev('e', null)] })).toBe('w\u0000event:e');
  });
  it('retries network errors, timeouts and 5xx only', () => {
    expect(retryable({ kind: 'network-error', error: 'x', durationMs: 1 })).toBe(true);
    expect(retryable({ kind: 'timeout', error: 'x', durationMs: 1 })).toBe(true);
    expect(retryable({ kind: 'response', statusCode: 500, durationMs: 1 })).toBe(true);
    expect(retryable({ kind: 'response', statusCode: 599, durationMs: 1 })).toBe(true);
    expect(retryable({ kind: 'response', statusCode: 429, durationMs: 1 })).toBe(false);
    expect(retryable({ kind: 'response', statusCode: 404, durationMs: 1 })).toBe(false);
    expect(retryable({ kind: 'refused', error: 'x', durationMs: 1 })).toBe(false);
  });
  it('the body is the event, or { batch } for a batch webhook', () => {
    const e = { id: 'e1' } as never;
    expect(deliveryBody({ batch: false, events: [e] })).toBe('{"id":"e1"}');
    expect(deliveryBody({ batch: true, events: [e] })).toBe('{"batch":[{"id":"e1"}]}');
  });
});
