/**
 * webhook-worker end to end, every piece real: the worker process on PostgreSQL, Redis (BullMQ) and
 * NATS JetStream; events published to the stream in the DomainEvent shape; a fake management-api
 * answering `management-api.v1.webhooks.resolve`; a real HTTP receiver on loopback. Each test uses
 * its own application ids, so tests share one worker.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  createTestDatabase,
  flushRedisPrefix,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import type { ODataListResponse, WebhookDelivery, WebhookDeliveryReplayResult } from '@switchboard/contracts';
import { Webhook } from 'standardwebhooks';
import {
  eventBus,
  eventInfo,
  fakeManagement,
  metricValue,
  metricsOf,
  natsCall,
  sql,
  startReceiver,
  startWorker,
  webhook,
  type EventBus,
  type FakeManagement,
  type Receiver,
} from './harness.js';

const SECRET = 'correct horse battery staple ✓';
const ORG = 'org-1';

describe('webhook-worker delivers domain events to webhooks', () => {
  const servers = testServers();
  const ns = testNamespace('webhooks');
  const redisPrefix = `${ns}:`;
  let db: TestDatabase;
  let nc: NatsConnection;
  let bus: EventBus;
  let management: FakeManagement;
  let receiver: Receiver;
  let worker: SpawnedService;
  const scope = { organizationId: ORG, operator: false, principal: 'test' };

  beforeAll(async () => {
    db = await createTestDatabase('webhooks');
    nc = await connect({ servers: servers.natsUrl });
    bus = await eventBus(nc, ns);
    management = fakeManagement(nc, ns);
    receiver = await startReceiver();
    worker = await startWorker({
      NATS_URL: servers.natsUrl,
      NATS_NAMESPACE: ns,
      REDIS_URL: servers.redisUrl,
      REDIS_KEY_PREFIX: redisPrefix,
      DATABASE_URL: db.url,
      LOG_LEVEL: 'warn',
      NATS_REQUEST_TIMEOUT_MS: '1000',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_RETRY_DELAY_MS: '100',
      WEBHOOK_BATCH_WINDOW_MS: '100',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_CONFIG_CACHE_MS: '2000',
      WEBHOOK_RECONCILE_AFTER_MS: '1000',
      WEBHOOK_RECONCILE_INTERVAL_MS: '300',
      WEBHOOK_PRUNE_INTERVAL_MS: '1000',
      WEBHOOK_LOG_RETENTION_DAYS: '1',
    });
  });

  afterAll(async () => {
    await worker?.stop();
    management?.close();
    await receiver?.close();
    await nc?.close();
    await flushRedisPrefix(servers.redisUrl, redisPrefix);
    await db?.drop();
  });

  const app = () => `app-${randomUUID().slice(0, 8)}`;
  const path = () => `/hook-${randomUUID().slice(0, 8)}`;
  const settle = (ms = 600) => new Promise((r) => setTimeout(r, ms));
  const attemptsOf = (webhookId: string) =>
    sql<{
      attempt: number;
      status_code: number | null;
      error: string | null;
      success: boolean;
      final: boolean;
      delivery_id: string;
    }>(
      db.url,
      `SELECT attempt, status_code, error, success, final, delivery_id FROM webhook.delivery_attempt WHERE webhook_id = $1 ORDER BY attempted_on, attempt`,
      [webhookId],
    );

  it('an application webhook and a channel webhook each get exactly the events they subscribe to; disabled webhooks get nothing', async () => {
    const a = app();
    const [appPath, channelPath, otherChannelPath, disabledPath, allPath] = [path(), path(), path(), path(), path()];
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [
        webhook('app-clients', `${receiver.url}${appPath}`, { events: ['client.registered', 'client.unregistered'] }),
        webhook('app-disabled', `${receiver.url}${disabledPath}`, { disabled: true }),
        webhook('app-all', `${receiver.url}${allPath}`, { events: ['*'] }),
      ],
      channels: {
        'room-1': {
          channelConfigId: 'cc-room-1',
          webhooks: [
            webhook('room-joins', `${receiver.url}${channelPath}`, {
              source: 'channel',
              events: ['channel.client.joined'],
            }),
          ],
        },
        '*': {
          channelConfigId: 'cc-any',
          webhooks: [webhook('any-room', `${receiver.url}${otherChannelPath}`, { source: 'channel', events: [] })],
        },
      },
    });
    const events = [
      eventInfo('client.registered', a, { channelId: null }),
      eventInfo('channel.client.joined', a, { channelId: 'room-1' }),
      eventInfo('channel.client.joined', a, { channelId: 'room-2' }),
      eventInfo('channel.client.left', a, { channelId: 'room-1' }),
      eventInfo('client.unregistered', a, { channelId: null }),
      eventInfo('channel.activated', a, { channelId: 'room-2' }),
    ];
    for (const e of events) await bus.publish(a, ORG, e);
    const ids = (...n: number[]) => n.map((i) => events[i]!.id);
    await waitFor(() => receiver.at(allPath).length === 6, {
      timeoutMs: 10000,
      description: 'every event at the catch-all webhook',
    });
    await waitFor(
      () =>
        receiver.at(appPath).length === 2 &&
        receiver.at(channelPath).length === 1 &&
        receiver.at(otherChannelPath).length === 2,
      {
        timeoutMs: 10000,
        description: 'the subscribed events',
      },
    );
    await settle();
    expect(receiver.at(appPath).flatMap((r) => r.eventIds)).toEqual(ids(0, 4));
    expect(receiver.at(channelPath).flatMap((r) => r.eventIds)).toEqual(ids(1));
    expect(
      receiver
        .at(otherChannelPath)
        .flatMap((r) => r.eventIds)
        .sort(),
    ).toEqual(ids(2, 5).sort());
    expect(
      receiver
        .at(allPath)
        .flatMap((r) => r.eventIds)
        .sort(),
    ).toEqual([...ids(0, 1, 2, 3, 4, 5)].sort());
    expect(receiver.at(disabledPath)).toEqual([]);
    // The body is the EventInfo itself, with the JSON content type.
    const first = receiver.at(appPath)[0]!;
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.body).toEqual(events[0]);
    // One delivery per (webhook, event), each logged once as a final success.
    const logged = await attemptsOf('room-joins');
    expect(logged).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, success: true, final: true, error: null }),
    ]);
  });

  it('a configuration change applies to the next event (applications.changed drops the cache)', async () => {
    const a = app();
    const [before, after] = [path(), path()];
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('cfg-hook', `${receiver.url}${before}`)],
    });
    await bus.publish(a, ORG, eventInfo('client.registered', a, { channelId: null }));
    await waitFor(() => receiver.at(before).length === 1, { timeoutMs: 10000 });
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('cfg-hook', `${receiver.url}${after}`)],
    });
    management.changed(a);
    await settle(200);
    await bus.publish(a, ORG, eventInfo('client.updated', a, { channelId: null }));
    await waitFor(() => receiver.at(after).length === 1, { timeoutMs: 10000, description: 'the event at the new URL' });
    expect(receiver.at(before)).toHaveLength(1);
  });

  it('batch: events generated at the same moment go in one call, other moments in their own', async () => {
    const a = app();
    const [batchPath, singlePath] = [path(), path()];
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [
        webhook('batched', `${receiver.url}${batchPath}`, { batch: true }),
        webhook('single', `${receiver.url}${singlePath}`),
      ],
    });
    const t = Date.now();
    const moment = [
      eventInfo('channel.client.left', a, { timestamp: t }),
      eventInfo('client.unregistered', a, { timestamp: t, channelId: null }),
      eventInfo('channel.deactivated', a, { timestamp: t }),
    ];
    const later = eventInfo('client.registered', a, { timestamp: t + 5, channelId: null });
    await Promise.all([...moment, later].map((e) => bus.publish(a, ORG, e)));
    await waitFor(() => receiver.at(singlePath).length === 4 && receiver.at(batchPath).length >= 2, {
      timeoutMs: 10000,
    });
    await settle();
    const calls = receiver.at(batchPath);
    expect(calls).toHaveLength(2);
    const together = calls.find((c) => c.eventIds.length === 3)!;
    expect(together.body).toEqual({ batch: moment });
    expect(calls.find((c) => c.eventIds.length === 1)!.body).toEqual({ batch: [later] });
    const logged = await sql<{ event_count: number; event_ids: string[] }>(
      db.url,
      `SELECT event_count, event_ids FROM webhook.delivery_attempt WHERE webhook_id = 'batched' AND application_id = $1 ORDER BY event_count DESC`,
      [a],
    );
    expect(logged).toEqual([
      { event_count: 3, event_ids: moment.map((e) => e.id) },
      { event_count: 1, event_ids: [later.id] },
    ]);
  });

  it('reliable: a receiver that drops the connection twice, then answers 200, gets the event on attempt 3 with the same webhook-id', async () => {
    const a = app();
    const p = path();
    receiver.on(p, (_r, nth) => (nth <= 2 ? 'drop' : 200));
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('flaky', `${receiver.url}${p}`, { reliable: true })],
    });
    const e = eventInfo('client.registered', a, { channelId: null });
    await bus.publish(a, ORG, e);
    await waitFor(() => receiver.at(p).length === 3, { timeoutMs: 10000, description: 'three attempts' });
    await settle();
    const calls = receiver.at(p);
    expect(calls).toHaveLength(3);
    const ids = new Set(calls.map((c) => c.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(calls.every((c) => c.raw === calls[0]!.raw)).toBe(true);
    const logged = await attemptsOf('flaky');
    expect(logged.map((l) => [l.attempt, l.status_code, l.success, l.final])).toEqual([
      [1, null, false, false],
      [2, null, false, false],
      [3, 200, true, true],
    ]);
    expect(logged[0]!.error).toMatch(/socket hang up|ECONNRESET/);
    expect(logged.every((l) => l.delivery_id === [...ids][0])).toBe(true);
  });

  it('reliable: a 5xx three times is a failed delivery after 3 attempts; a 4xx is not retried', async () => {
    const a = app();
    const [fivePath, fourPath] = [path(), path()];
    receiver.on(fivePath, () => 503);
    receiver.on(fourPath, () => 410);
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [
        webhook('five', `${receiver.url}${fivePath}`, { reliable: true }),
        webhook('four', `${receiver.url}${fourPath}`, { reliable: true }),
      ],
    });
    await bus.publish(a, ORG, eventInfo('client.registered', a, { channelId: null }));
    await waitFor(() => receiver.at(fivePath).length === 3 && receiver.at(fourPath).length === 1, { timeoutMs: 10000 });
    await settle(800);
    expect(receiver.at(fivePath)).toHaveLength(3);
    expect(receiver.at(fourPath)).toHaveLength(1);
    expect((await attemptsOf('five')).map((l) => [l.attempt, l.status_code, l.final])).toEqual([
      [1, 503, false],
      [2, 503, false],
      [3, 503, true],
    ]);
    expect((await attemptsOf('four')).map((l) => [l.attempt, l.status_code, l.final, l.error])).toEqual([
      [1, 410, true, 'HTTP 410'],
    ]);
  });

  it('reliable: false gets one attempt; the failed delivery can be listed and replayed as a new delivery', async () => {
    const a = app();
    const p = path();
    let failing = true;
    receiver.on(p, () => (failing ? 'drop' : 200));
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('once', `${receiver.url}${p}`, { reliable: false })],
    });
    const e = eventInfo('client.registered', a, { channelId: null });
    await bus.publish(a, ORG, e);
    await waitFor(() => receiver.at(p).length === 1, { timeoutMs: 10000 });
    await settle(800);
    expect(receiver.at(p)).toHaveLength(1);
    const logged = await attemptsOf('once');
    expect(logged.map((l) => [l.attempt, l.success, l.final])).toEqual([[1, false, true]]);

    const list = await natsCall<ODataListResponse<WebhookDelivery>>(nc, ns, 'webhook-worker.v1.deliveries.list', {
      scope,
      query: { $filter: `webhookId eq 'once' and applicationId eq '${a}'`, $count: 'true' },
    });
    expect(list.err).toBeUndefined();
    expect(list.response!['@odata.count']).toBe(1);
    const failed = list.response!.value[0]!;
    expect(failed).toEqual(
      expect.objectContaining({
        webhookId: 'once',
        webhookSource: 'application',
        eventId: e.id,
        eventType: 'client.registered',
        eventIds: [e.id],
        attempt: 1,
        success: false,
        final: true,
        statusCode: null,
      }),
    );
    // The webhook, owner and event columns of an attempt come from its delivery's row.
    expect(failed).toEqual(
      expect.objectContaining({
        organizationId: ORG,
        applicationId: a,
        channelId: null,
        eventCount: 1,
        batch: false,
        url: `${receiver.url}${p}`,
        replayOf: null,
      }),
    );

    failing = false;
    const replay = await natsCall<WebhookDeliveryReplayResult>(nc, ns, 'webhook-worker.v1.deliveries.replay', {
      scope,
      id: failed.id,
    });
    expect(replay.err).toBeUndefined();
    expect(replay.response).toEqual({ deliveryId: expect.any(String), replayOf: failed.deliveryId });
    await waitFor(() => receiver.at(p).length === 2, { timeoutMs: 10000, description: 'the replayed delivery' });
    const again = receiver.at(p)[1]!;
    expect(again.headers['webhook-id']).toBe(replay.response!.deliveryId);
    expect(again.body).toEqual(e);
    await waitFor(async () => (await attemptsOf('once')).length === 2, { timeoutMs: 5000 });
    const replayed = await natsCall<WebhookDelivery>(nc, ns, 'webhook-worker.v1.deliveries.list', {
      scope,
      query: { $filter: `replayOf eq ${failed.deliveryId}` },
    });
    expect((replayed.response as unknown as ODataListResponse<WebhookDelivery>).value).toEqual([
      expect.objectContaining({
        attempt: 1,
        success: true,
        statusCode: 200,
        deliveryId: replay.response!.deliveryId,
        replayOf: failed.deliveryId,
        eventId: e.id,
        eventIds: [e.id],
        webhookId: 'once',
        organizationId: ORG,
      }),
    ]);

    // A delivery that did not fail cannot be replayed.
    const okAttempt = (replayed.response as unknown as ODataListResponse<WebhookDelivery>).value[0]!;
    const conflict = await natsCall(nc, ns, 'webhook-worker.v1.deliveries.replay', { scope, id: okAttempt.id });
    expect(conflict.err?.code).toBe('Conflict');
  });

  it('signatures verify with an independent HMAC and with the standardwebhooks verifier', async () => {
    const a = app();
    const [p, q] = [path(), path()];
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [
        webhook('signed', `${receiver.url}${p}`),
        webhook('signed-batch', `${receiver.url}${q}`, { batch: true }),
      ],
    });
    await bus.publish(a, ORG, eventInfo('client.registered', a, { channelId: null }));
    await waitFor(() => receiver.at(p).length === 1 && receiver.at(q).length === 1, { timeoutMs: 10000 });
    for (const r of [receiver.at(p)[0]!, receiver.at(q)[0]!]) {
      const expected = createHmac('sha256', Buffer.from(SECRET, 'utf8'))
        .update(Buffer.from(r.raw, 'utf8'))
        .digest('base64');
      expect(r.headers['x-applicationsignature']).toBe(expected);
      // Spelled as the contract writes it, for receivers that look headers up case-sensitively.
      expect(r.headerNames).toContain('X-ApplicationSignature');
      const id = r.headers['webhook-id'] as string;
      const ts = r.headers['webhook-timestamp'] as string;
      expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
      const sw = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${id}.${ts}.${r.raw}`).digest('base64');
      expect(r.headers['webhook-signature']).toBe(`v1,${sw}`);
      const verifier = new Webhook(`whsec_${Buffer.from(SECRET, 'utf8').toString('base64')}`);
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': ts,
        'webhook-signature': r.headers['webhook-signature'] as string,
      };
      expect(verifier.verify(r.raw, headers)).toEqual(r.body);
      expect(() => verifier.verify(`${r.raw} `, headers)).toThrow();
      expect(() =>
        new Webhook(`whsec_${Buffer.from('another secret').toString('base64')}`).verify(r.raw, headers),
      ).toThrow();
    }
  });

  it('refuses private, link-local and metadata targets (SSRF) without a request, and says why in the log', async () => {
    const a = app();
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [
        webhook('private', 'http://10.1.2.3:8080/in', { reliable: true }),
        webhook('metadata', 'http://169.254.169.254/latest/meta-data/'),
        webhook('mapped', 'http://[::ffff:192.168.1.1]/in'),
      ],
    });
    await bus.publish(a, ORG, eventInfo('client.registered', a, { channelId: null }));
    await waitFor(
      async () =>
        (await sql(db.url, `SELECT 1 FROM webhook.delivery_attempt WHERE application_id = $1`, [a])).length === 3,
      { timeoutMs: 10000 },
    );
    await settle(500);
    const rows = await sql<{
      webhook_id: string;
      attempt: number;
      error: string;
      final: boolean;
      status_code: number | null;
    }>(
      db.url,
      `SELECT webhook_id, attempt, error, final, status_code FROM webhook.delivery_attempt WHERE application_id = $1 ORDER BY webhook_id`,
      [a],
    );
    expect(rows).toEqual([
      {
        webhook_id: 'mapped',
        attempt: 1,
        final: true,
        status_code: null,
        error: expect.stringMatching(/refused.*private/),
      },
      {
        webhook_id: 'metadata',
        attempt: 1,
        final: true,
        status_code: null,
        error: expect.stringMatching(/refused.*metadata/),
      },
      {
        webhook_id: 'private',
        attempt: 1,
        final: true,
        status_code: null,
        error: expect.stringMatching(/refused.*10\.1\.2\.3.*private/),
      },
    ]);
  });

  it('an event published twice (another message id) is queued once; an unknown application gets nothing', async () => {
    const a = app();
    const p = path();
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('dedupe', `${receiver.url}${p}`, { reliable: true })],
    });
    const e = eventInfo('client.registered', a, { channelId: null });
    await bus.publish(a, ORG, e, `${e.id}-first`);
    await waitFor(() => receiver.at(p).length === 1, { timeoutMs: 10000 });
    await bus.publish(a, ORG, e, `${e.id}-second`);
    const unknown = `unknown-${a}`;
    await bus.publish(unknown, ORG, eventInfo('client.registered', unknown, { channelId: null }));
    await settle(1000);
    expect(receiver.at(p)).toHaveLength(1);
    expect(await sql(db.url, `SELECT id FROM webhook.delivery WHERE application_id = $1`, [a])).toHaveLength(1);
    expect(await sql(db.url, `SELECT id FROM webhook.delivery WHERE application_id = $1`, [unknown])).toHaveLength(0);
    expect(management.calls.get(unknown)).toBeGreaterThanOrEqual(1);
  });

  it('events wait while management-api does not answer, and are delivered once it does', async () => {
    const a = app();
    const p = path();
    const e = eventInfo('client.registered', a, { channelId: null });
    // Nobody answers for this application yet: the fake answers NotFound only for known misses, so
    // route this application to a subject nobody serves by closing the fake for a moment.
    management.close();
    await bus.publish(a, ORG, e);
    await settle(1500);
    expect(receiver.at(p)).toHaveLength(0);
    management = fakeManagement(nc, ns);
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('late', `${receiver.url}${p}`)],
    });
    await waitFor(() => receiver.at(p).length === 1, {
      timeoutMs: 15000,
      description: 'the event after management-api came back',
    });
    expect(receiver.at(p)[0]!.eventIds).toEqual([e.id]);
  });

  it('while management-api is down, events are still delivered with the last configuration read (WEBHOOK_CONFIG_STALE_MS), logged and counted', async () => {
    const a = app();
    const p = path();
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('kept', `${receiver.url}${p}`)],
    });
    await bus.publish(a, ORG, eventInfo('channel.client.joined', a, { channelId: 'room-kept' }));
    await waitFor(() => receiver.at(p).length === 1, {
      timeoutMs: 10000,
      description: 'the event before management-api stops',
    });
    const staleBefore = metricValue(await metricsOf(worker), 'webhook_config_stale_total');
    management.close();
    try {
      // Past the cache time: the worker asks management-api again, nobody answers.
      await settle(2500);
      const events = Array.from({ length: 5 }, () => eventInfo('channel.client.left', a, { channelId: 'room-kept' }));
      for (const e of events) await bus.publish(a, ORG, e);
      await waitFor(() => receiver.at(p).length === 1 + events.length, {
        timeoutMs: 10000,
        description: 'the events published while management-api is down',
      });
      expect(
        receiver
          .at(p)
          .slice(1)
          .flatMap((r) => r.eventIds),
      ).toEqual(events.map((e) => e.id));
      // Signed with the kept secret.
      const last = receiver.at(p).at(-1)!;
      expect(last.headers['x-applicationsignature']).toBe(
        createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(last.raw, 'utf8').digest('base64'),
      );
      const text = await metricsOf(worker);
      expect(metricValue(text, 'webhook_config_stale_total')).toBeGreaterThan(staleBefore);
      expect(metricValue(text, 'webhook_config_stale_keys')).toBeGreaterThanOrEqual(1);
    } finally {
      const apps = management.apps;
      management = fakeManagement(nc, ns);
      for (const [id, config] of apps) management.apps.set(id, config);
    }
  });

  it('the delivery log answers OData queries, scoped to the caller organization', async () => {
    const a = app();
    const p = path();
    management.apps.set(a, {
      organizationId: 'org-2',
      sharedSecret: SECRET,
      webhooks: [webhook('org2-hook', `${receiver.url}${p}`)],
    });
    await bus.publish(a, 'org-2', eventInfo('client.registered', a, { channelId: null }));
    await bus.publish(a, 'org-2', eventInfo('client.updated', a, { channelId: null }));
    await waitFor(
      async () =>
        (await sql(db.url, `SELECT 1 FROM webhook.delivery_attempt WHERE application_id = $1`, [a])).length === 2,
      { timeoutMs: 10000 },
    );

    const list = (
      query: Record<string, string>,
      s: object = { organizationId: 'org-2', operator: false, principal: 'k' },
    ) =>
      natsCall<ODataListResponse<Partial<WebhookDelivery>>>(nc, ns, 'webhook-worker.v1.deliveries.list', {
        scope: s,
        query,
      });
    const selected = await list({
      $select: 'eventType,attempt,success',
      $orderby: 'eventType desc',
      $filter: `applicationId eq '${a}'`,
    });
    expect(selected.response).toEqual({
      value: [
        { eventType: 'client.updated', attempt: 1, success: true },
        { eventType: 'client.registered', attempt: 1, success: true },
      ],
    });
    const paged = await list({ $filter: `applicationId eq '${a}'`, $top: '1', $skip: '1', $count: 'true' });
    expect(paged.response!['@odata.count']).toBe(2);
    expect(paged.response!.value).toHaveLength(1);
    // Another organization sees nothing of org-2, an operator sees it.
    expect((await list({ $filter: `applicationId eq '${a}'` }, scope)).response!.value).toEqual([]);
    expect(
      (await list({ $filter: `applicationId eq '${a}'` }, { organizationId: null, operator: true, principal: 'op' }))
        .response!.value,
    ).toHaveLength(2);
    // Errors name the option.
    const bad = await list({ $filter: 'nope eq 1' });
    expect(bad.err).toEqual(
      expect.objectContaining({ code: 'ValidationFailed', details: [expect.objectContaining({ field: '$filter' })] }),
    );
    expect(bad.err!.details![0]!.message).toMatch(/^UnknownProperty: /);

    const id =
      selected.response && (await list({ $filter: `applicationId eq '${a}'`, $select: 'id' })).response!.value[0]!.id!;
    const one = await natsCall<Partial<WebhookDelivery>>(nc, ns, 'webhook-worker.v1.deliveries.get', {
      scope: { organizationId: 'org-2', operator: false, principal: 'k' },
      id,
      query: { $select: 'id,url' },
    });
    expect(one.response).toEqual({ id, url: `${receiver.url}${p}` });
    const hidden = await natsCall(nc, ns, 'webhook-worker.v1.deliveries.get', { scope, id });
    expect(hidden.err?.code).toBe('NotFound');

    // $expand is bound to the attempt's properties, on the list and the single read alike: an attempt has
    // no navigation properties, so `*` expands nothing (the answer is unchanged) and any name is UnknownProperty.
    const org2 = { organizationId: 'org-2', operator: false, principal: 'k' };
    const unexpanded = await list({ $filter: `applicationId eq '${a}'`, $orderby: 'eventType desc' });
    expect(
      (await list({ $filter: `applicationId eq '${a}'`, $orderby: 'eventType desc', $expand: '*' })).response,
    ).toEqual(unexpanded.response);
    const plainOne = await natsCall<Partial<WebhookDelivery>>(nc, ns, 'webhook-worker.v1.deliveries.get', {
      scope: org2,
      id,
    });
    expect(plainOne.response?.id).toBe(id);
    expect(
      (await natsCall(nc, ns, 'webhook-worker.v1.deliveries.get', { scope: org2, id, query: { $expand: '*' } }))
        .response,
    ).toEqual(plainOne.response);
    expect(
      (
        await natsCall(nc, ns, 'webhook-worker.v1.deliveries.get', {
          scope: org2,
          id,
          query: { $select: 'id', $expand: '*' },
        })
      ).response,
    ).toEqual({ id });
    for (const nope of [
      await list({ $expand: 'nope' }),
      await natsCall(nc, ns, 'webhook-worker.v1.deliveries.get', { scope: org2, id, query: { $expand: 'nope' } }),
    ]) {
      expect(nope.err).toEqual(
        expect.objectContaining({ code: 'ValidationFailed', details: [expect.objectContaining({ field: '$expand' })] }),
      );
      expect(nope.err!.details![0]!.message).toMatch(/^UnknownProperty: .*'nope'/);
    }
    // A single read takes $select and $expand only.
    const top = await natsCall(nc, ns, 'webhook-worker.v1.deliveries.get', { scope: org2, id, query: { $top: '1' } });
    expect(top.err).toEqual(
      expect.objectContaining({
        code: 'ValidationFailed',
        details: [expect.objectContaining({ field: '$top', message: expect.stringMatching(/^QuerySyntaxError: /) })],
      }),
    );
  });

  it('keeps the order of the events of one channel for a webhook', async () => {
    const a = app();
    const p = path();
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('ordered', `${receiver.url}${p}`)],
    });
    const events = Array.from({ length: 60 }, (_, i) =>
      eventInfo(i % 2 ? 'channel.client.joined' : 'channel.client.left', a, { channelId: 'room-order' }),
    );
    for (const e of events) await bus.publish(a, ORG, e);
    await waitFor(() => receiver.at(p).length === events.length, { timeoutMs: 10000 });
    expect(receiver.at(p).flatMap((r) => r.eventIds)).toEqual(events.map((e) => e.id));
  });

  it('keeps each channel in stream order when a job carries deliveries of several channels', async () => {
    const a = app();
    const p = path();
    management.apps.set(a, {
      organizationId: ORG,
      sharedSecret: SECRET,
      webhooks: [webhook('lanes', `${receiver.url}${p}`)],
    });
    // 8 channels of 20 events: a channel's run in a group is at most 20 deliveries, so a job (at
    // most 50) holds runs of several channels.
    const channels = Array.from({ length: 8 }, (_, i) => `room-${i}`);
    const events = Array.from({ length: 160 }, (_, i) =>
      eventInfo('channel.client.joined', a, { channelId: channels[i % channels.length]! }),
    );
    // Published at once, without waiting for each acknowledgement: the worker takes them in groups
    // spanning the channels, and the order to keep is the stream's (each PubAck's sequence).
    const seq = new Map<string, number>();
    await Promise.all(events.map(async (e) => seq.set(e.id, await bus.publish(a, ORG, e))));
    await waitFor(() => receiver.at(p).length === events.length, {
      timeoutMs: 15000,
      description: 'every event delivered',
    });
    const arrived = receiver.at(p).flatMap((r) => r.eventIds);
    for (const channel of channels) {
      const ofChannel = events.filter((e) => e.channel?.id === channel).map((e) => e.id);
      expect(arrived.filter((id) => ofChannel.includes(id))).toEqual(
        [...ofChannel].sort((x, y) => seq.get(x)! - seq.get(y)!),
      );
    }
    // Some job carried deliveries of several channels (lanes), so the order held across them too.
    const jobs = await sql<{ channels: number }>(
      db.url,
      `SELECT count(DISTINCT channel_id)::int AS channels FROM webhook.delivery WHERE application_id = $1 AND job_id IS NOT NULL GROUP BY job_id`,
      [a],
    );
    expect(Math.max(0, ...jobs.map((j) => j.channels))).toBeGreaterThan(1);
  });

  it('a pending delivery whose job was lost (crash between commit and queueing, Redis data loss) is queued again', async () => {
    const a = app();
    const p = path();
    management.apps.set(a, { organizationId: ORG, sharedSecret: SECRET, webhooks: [] });
    const e = eventInfo('client.registered', a, { channelId: null });
    const id = randomUUID();
    await sql(
      db.url,
      `INSERT INTO webhook.delivery (id, webhook_id, webhook_source, url, organization_id, application_id, channel_id, batch, reliable, event_ids, event_types, events, state, attempts, created_on)
       VALUES ($1, 'orphan', 'application', $2, $3, $4, NULL, false, true, $5, $6, $7, 'pending', 0, $8)`,
      [id, `${receiver.url}${p}`, ORG, a, [e.id], [e.type], JSON.stringify([e]), Date.now() - 5000],
    );
    await waitFor(() => receiver.at(p).length === 1, { timeoutMs: 10000, description: 'the orphaned delivery' });
    expect(receiver.at(p)[0]!.headers['webhook-id']).toBe(id);
    expect(receiver.at(p)[0]!.body).toEqual(e);
    await waitFor(
      async () =>
        (await sql<{ state: string }>(db.url, `SELECT state FROM webhook.delivery WHERE id = $1`, [id]))[0]?.state ===
        'succeeded',
      { timeoutMs: 5000 },
    );
    await settle(1000);
    expect(receiver.at(p)).toHaveLength(1);
  });

  it('prunes deliveries, attempts and processed event ids older than the retention', async () => {
    const old = Date.now() - 2 * 24 * 3600 * 1000;
    const id = randomUUID();
    // One statement: the worker prunes every second and must not see the delivery without its attempt.
    await sql(
      db.url,
      `WITH d AS (
         INSERT INTO webhook.delivery (id, webhook_id, webhook_source, url, organization_id, application_id, batch, reliable, event_ids, event_types, events, state, attempts, created_on, finished_on)
         VALUES ($1, 'old', 'application', 'https://x.test/', $2, 'old-app', false, false, ARRAY['old-evt'], ARRAY['client.registered'], '[]', 'succeeded', 1, $3, $3)
         RETURNING id
       ), a AS (
         INSERT INTO webhook.delivery_attempt (id, delivery_id, webhook_id, webhook_source, organization_id, application_id, event_id, event_type, event_ids, event_count, batch, url, attempt, status_code, success, final, duration_ms, attempted_on)
         SELECT $4, d.id, 'old', 'application', $2, 'old-app', 'old-evt', 'client.registered', ARRAY['old-evt'], 1, false, 'https://x.test/', 1, 200, true, true, 5, $3 FROM d
       )
       INSERT INTO webhook.processed_event (event_id, processed_on) VALUES ('old-evt', $3)`,
      [id, ORG, old, randomUUID()],
    );
    await waitFor(
      async () =>
        (
          await sql(
            db.url,
            `SELECT 1 FROM webhook.delivery WHERE id = $1 UNION ALL SELECT 1 FROM webhook.delivery_attempt WHERE delivery_id = $1 UNION ALL SELECT 1 FROM webhook.processed_event WHERE event_id = 'old-evt'`,
            [id],
          )
        ).length === 0,
      { timeoutMs: 10000, description: 'the old rows pruned' },
    );
    // Recent rows stay.
    expect((await sql(db.url, `SELECT count(*)::int AS n FROM webhook.delivery`))[0]).toEqual({
      n: expect.any(Number),
    });
    expect((await sql<{ n: number }>(db.url, `SELECT count(*)::int AS n FROM webhook.delivery`))[0]!.n).toBeGreaterThan(
      10,
    );
  });

  it('exposes deliveries, failures, retries, queue depth and event-to-delivery latency on /metrics', async () => {
    const text = await metricsOf(worker);
    expect(metricValue(text, 'webhook_deliveries_total', { result: 'succeeded' })).toBeGreaterThan(0);
    expect(metricValue(text, 'webhook_deliveries_total', { result: 'failed' })).toBeGreaterThan(0);
    expect(metricValue(text, 'webhook_delivery_retries_total')).toBeGreaterThan(0);
    expect(metricValue(text, 'webhook_delivery_attempts_total', { outcome: 'refused' })).toBeGreaterThanOrEqual(3);
    expect(metricValue(text, 'webhook_event_to_delivery_seconds_count')).toBeGreaterThan(0);
    expect(text).toMatch(/webhook_queue_jobs\{[^}]*state="waiting"[^}]*\} \d+/);
    expect(metricValue(text, 'webhook_events_total', { outcome: 'queued' })).toBeGreaterThan(0);
  });
});
