/**
 * Poison events against the real stack: events no consumer can process (a string with NUL, one with
 * a lone surrogate, a body that is not JSON) are published straight to the stream, before the
 * services start, among ordinary ones, on a stream whose durable consumers were created by an older
 * release (max_deliver -1). Every ordinary event is still delivered (webhook), counted (usage) and
 * consumed (recording-service); the poison ones are parked and listed on interface B (operator
 * only); a replay of one whose cause is gone delivers it, one whose cause remains stays parked.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName, eventSubject, parkedSubject, type ParkedEventMessage } from '@switchboard/contracts';
import {
  createTestDatabase,
  findApp,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { call } from '../e2e/http.js';
import { sql } from '../webhooks/harness.js';

const run = promisify(execFile);
const CONSUMERS = ['webhook-worker', 'usage-aggregator', 'recording-service'];

interface Parked {
  id: string;
  consumer: string;
  service: string;
  streamSequence: number;
  payload: string;
  payloadPreview: string;
  error: string;
  status: string;
  replays: number;
}

describe('poison events', () => {
  const servers = testServers();
  const ns = testNamespace('poison');
  const applicationId = `app-${ns}`;
  let db: TestDatabase;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let operatorKey: string;
  let organizationId: string;
  let receiver: http.Server;
  const delivered = new Set<string>();
  const seqs = new Map<string, number>();

  const h = (key = operatorKey) => ({ 'X-API-Key': key });
  const message = (text: string, id = randomUUID()) => ({
    applicationId,
    organizationId,
    event: {
      id,
      timestamp: Date.now(),
      origin: 'client',
      type: 'client.message',
      forced: false,
      channel: { id: 'room-1', applicationId, channelRecording: null },
      client: { id: 'client-1', userId: 'user-1', deviceId: 'device-1', applicationId },
      connection: null,
      message: { text },
    },
  });
  const publish = async (label: string, body: string, msgID = randomUUID()) => {
    seqs.set(label, (await jetstream(nc).publish(eventSubject(ns, 'client.message'), body, { msgID })).seq);
  };
  const parked = async (filter: string) => {
    const answer = await call<{ value: Parked[] }>(
      'GET',
      `${management.url!}/ParkedEvents?$filter=${encodeURIComponent(filter)}&$orderby=streamSequence`,
      { headers: h() },
    );
    expect(answer.status).toBe(200);
    return answer.body.value;
  };
  const usageMessages = async () =>
    Number(
      (
        await sql<{ n: string }>(
          db.url,
          'SELECT coalesce(sum(participant_messages), 0) AS n FROM usage.hourly_messages WHERE application_id = $1',
          [applicationId],
        )
      )[0]!.n,
    );
  const backlog = async (consumer: string) => {
    const info = await jsm.consumers.info(eventStreamName(ns), consumer);
    return info.num_pending + info.num_ack_pending;
  };

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        const body = JSON.parse(raw) as { id?: string; batch?: Array<{ id: string }> };
        for (const id of body.batch ? body.batch.map((e) => e.id) : [body.id!]) delivered.add(id);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    db = await createTestDatabase('poison');
    const root = path.join(servers.dataDir, 'recordings', ns);
    const env = {
      ...serviceTestEnv(ns, db.url),
      LOG_LEVEL: 'error',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      EVENT_MAX_ATTEMPTS: '2',
      RECORDINGS_DIR: path.join(root, 'work'),
      RECORDINGS_STORAGE_DIR: path.join(root, 'storage'),
      RECORDINGS_URL_SECRET: 'poison-test-secret-0123456789abcdef',
    };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    ({ apiKey: operatorKey, organizationId } = JSON.parse(boot.stdout) as { apiKey: string; organizationId: string });
    management = await spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) });
    processes.push(management);
    const config = await call<{ id: string }>('POST', `${management.url!}/ApplicationConfigs`, {
      headers: h(),
      body: { applicationId },
    });
    assert.equal(config.status, 201);
    const hook = {
      applicationConfigId: config.body.id,
      name: 'all',
      url: `${receiverUrl}/hook`,
      events: [],
      disabled: false,
      batch: false,
      reliable: true,
    };
    assert.equal(
      (await call('POST', `${management.url!}/ApplicationWebhooks`, { headers: h(), body: hook })).status,
      201,
    );

    // The stream and the consumers as an older release left them: unlimited deliveries.
    nc = await connect({ servers: servers.natsUrl });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: eventStreamName(ns),
      subjects: [eventSubject(ns, '>')],
      max_age: nanos(3600_000),
      duplicate_window: nanos(120_000),
    });
    for (const name of CONSUMERS) {
      await jsm.consumers.add(eventStreamName(ns), {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: eventSubject(ns, '>'),
        max_deliver: -1,
        ack_wait: nanos(30_000),
      });
    }
    // Poison among ordinary events, straight to the stream (no API validation on the way).
    for (let i = 0; i < 5; i++) await publish(`before-${i}`, JSON.stringify(message(`hello ${i}`)));
    await publish('nul', JSON.stringify(message('bad \u0000 byte')));
    await publish('surrogate', JSON.stringify(message('lone \ud800 surrogate')));
    await publish('broken', '{"event": {"id": "broken", "type": "client.message"');
    for (let i = 5; i < 10; i++) await publish(`before-${i}`, JSON.stringify(message(`hello ${i}`)));

    const started = await Promise.all(
      ['webhook-worker', 'usage-aggregator', 'recording-service'].map(async (name) =>
        spawnService(name, { ...env, HTTP_PORT: String(await freePort()) }, { readyTimeoutMs: 30_000 }),
      ),
    );
    processes.push(...started);
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) await p.stop();
    await new Promise<void>((r) => receiver?.close(() => r()));
    await jsm?.streams.delete(eventStreamName(ns)).catch(() => undefined);
    await nc?.close();
    await db?.drop();
  });

  it('does not stall consumers left with max_deliver -1: every ordinary event is delivered, counted and consumed; the poison ones are parked and listed', async () => {
    const ordinary = 10;
    await waitFor(async () => (await parked(`consumer eq 'webhook-worker'`)).length === 3, { timeoutMs: 30_000 });
    await waitFor(async () => delivered.size >= ordinary, { timeoutMs: 30_000 });
    // Usage counts the two well-formed messages with odd text too: only the broken body is poison to it.
    await waitFor(async () => (await usageMessages()) === ordinary + 2, { timeoutMs: 30_000 });
    for (const consumer of CONSUMERS) await waitFor(async () => (await backlog(consumer)) === 0, { timeoutMs: 30_000 });
    expect(delivered.size).toBe(ordinary);

    // The old consumers' unlimited deliveries were bounded (EVENT_MAX_ATTEMPTS + 120).
    for (const consumer of CONSUMERS)
      expect((await jsm.consumers.info(eventStreamName(ns), consumer)).config.max_deliver).toBe(122);

    const byWebhook = await parked(`consumer eq 'webhook-worker'`);
    expect(byWebhook.map((p) => p.streamSequence)).toEqual([
      seqs.get('nul'),
      seqs.get('surrogate'),
      seqs.get('broken'),
    ]);
    expect(byWebhook.every((p) => p.service === 'webhook-worker' && p.status === 'Parked')).toBe(true);
    const nul = byWebhook[0]!;
    expect(Buffer.from(nul.payload, 'base64').toString('utf8')).toContain('bad \\u0000 byte');
    expect(nul.error.length).toBeGreaterThan(0);
    expect(byWebhook[2]!.error).toContain('not JSON');
    for (const consumer of ['usage-aggregator', 'recording-service']) {
      const own = await waitFor(
        async () => {
          const list = await parked(`consumer eq '${consumer}'`);
          return list.length === 1 ? list : null;
        },
        { timeoutMs: 15_000 },
      );
      expect(own[0]!.streamSequence).toBe(seqs.get('broken'));
    }
  });

  it('an event parked twice (a crash between parking and acknowledging, beyond the duplicate window) is listed once', async () => {
    const broken = (await parked(`consumer eq 'usage-aggregator'`))[0]!;
    const again: ParkedEventMessage = {
      service: 'usage-aggregator',
      consumer: 'usage-aggregator',
      stream: eventStreamName(ns),
      streamSequence: broken.streamSequence,
      subject: eventSubject(ns, 'client.message'),
      payload: broken.payload,
      error: 'parked again',
      attempts: 1,
      parkedAt: Date.now(),
    };
    await jetstream(nc).publish(parkedSubject(ns, 'usage-aggregator', 'usage-aggregator'), JSON.stringify(again), {
      msgID: randomUUID(),
    });
    const marker = (
      await jetstream(nc).publish(
        parkedSubject(ns, 'usage-aggregator', 'usage-aggregator'),
        JSON.stringify({ ...again, streamSequence: 999_999 }),
        { msgID: randomUUID() },
      )
    ).seq;
    expect(marker).toBeGreaterThan(0);
    // The later one stored shows the first was handled.
    await waitFor(
      async () => (await parked(`consumer eq 'usage-aggregator' and streamSequence eq 999999`)).length === 1,
      { timeoutMs: 10_000 },
    );
    const listed = await parked(`consumer eq 'usage-aggregator' and streamSequence eq ${broken.streamSequence}`);
    expect(listed).toHaveLength(1);
    expect(listed[0]!.error).toBe(broken.error);
  });

  it('lists parked events for an operator credential only', async () => {
    const created = await call<{ key?: string }>('POST', `${management.url!}/ApiKeys`, {
      headers: h(),
      body: { tag: 'not an operator' },
    });
    expect(created.status).toBe(201);
    const plainKey = created.body.key!;
    expect((await call('GET', `${management.url!}/ParkedEvents`, { headers: h(plainKey) })).status).toBe(403);
    const one = (await parked(`consumer eq 'webhook-worker'`))[0]!;
    expect(
      (await call('POST', `${management.url!}/ParkedEvents/${one.id}/Replay`, { headers: h(plainKey) })).status,
    ).toBe(403);
  });

  it('a replay whose cause remains keeps the event parked with the new error; one whose cause is gone delivers it', async () => {
    const nul = (await parked(`consumer eq 'webhook-worker'`))[0]!;
    const again = await call<Parked>('POST', `${management.url!}/ParkedEvents/${nul.id}/Replay`, { headers: h() });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'Parked', replays: 1 });

    // A cause an operator can remove: the worker's database refuses one event (not a dependency outage).
    const refused = message('refused for now');
    await sql(
      db.url,
      `CREATE FUNCTION webhook.refuse_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.event_id = '${refused.event.id}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`,
    );
    await sql(
      db.url,
      `CREATE TRIGGER refuse_for_test BEFORE INSERT ON webhook.processed_event FOR EACH ROW EXECUTE FUNCTION webhook.refuse_for_test()`,
    );
    const neighbours = [message('before refused'), message('after refused')];
    await publish('n0', JSON.stringify(neighbours[0]));
    await publish('refused', JSON.stringify(refused));
    await publish('n1', JSON.stringify(neighbours[1]));
    await waitFor(async () => neighbours.every((n) => delivered.has(n.event.id)), { timeoutMs: 15_000 });
    const parkedRefused = await waitFor(
      async () => (await parked(`consumer eq 'webhook-worker' and streamSequence eq ${seqs.get('refused')}`))[0],
      { timeoutMs: 20_000 },
    );
    expect(parkedRefused.error).toContain('refused by the test');
    expect(delivered.has(refused.event.id)).toBe(false);

    await sql(db.url, 'DROP TRIGGER refuse_for_test ON webhook.processed_event');
    const replayed = await call<Parked>('POST', `${management.url!}/ParkedEvents/${parkedRefused.id}/Replay`, {
      headers: h(),
    });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ status: 'Replayed', replays: 1 });
    await waitFor(async () => delivered.has(refused.event.id), { timeoutMs: 15_000 });
    expect(
      (await call('POST', `${management.url!}/ParkedEvents/${parkedRefused.id}/Replay`, { headers: h() })).status,
    ).toBe(409);
  });
});
