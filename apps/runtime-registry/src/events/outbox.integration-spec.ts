/**
 * The outbox of parked events, with two registry replicas sharing it (real NATS and Redis): an
 * event published while older events wait in the outbox is stored after them, whichever replica
 * parked them; relays running at once (two replicas, or one pass overlapping the next) publish
 * each parked event once, in order; an event the stream can never take does not hold the others
 * back; a NATS crash loses nothing and keeps the order.
 */
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { eventSubject, type DomainEvent } from '@switchboard/contracts';
import {
  flushRedisPrefix,
  startNatsServer,
  testNamespace,
  testServers,
  waitFor,
  type OwnNatsServer,
} from '@switchboard/testing';
import { domainEvent, messagePart } from '../model/events.js';
import { LiveStore } from '../store/live-store.js';
import { EventReader, registryEnv, startRegistry } from '../testing/harness.testing.js';
import { EventPublisher } from './event-publisher.js';
import type { Redis } from 'ioredis';
import { REDIS } from '@switchboard/service-kit';

const ORG = 'org-outbox';
const decoder = new TextDecoder();

/** An event of application `a` whose message text is `label` (what the assertions compare). */
function labelled(a: string, label: string): DomainEvent {
  return domainEvent(
    { applicationId: a, organizationId: ORG },
    'server.message',
    { origin: 'api', forced: true },
    { channelId: 'ch', message: messagePart({ message: label }) },
  );
}

const labelOf = (e: DomainEvent) => e.event.message?.message ?? '';

/**
 * Two replicas of one deployment (same namespace, Redis prefix and stream); no housekeeping pass runs during the tests.
 */
async function twoReplicas(ns: string, extra: Record<string, string> = {}) {
  const env = registryEnv(ns, { EVENT_PUBLISH_TIMEOUT_MS: '300', REGISTRY_SWEEP_INTERVAL_MS: '600000', ...extra });
  return [await startRegistry(env), await startRegistry(env)];
}

describe('the outbox of parked events, two replicas', () => {
  const ns = testNamespace('outbox');
  let replicas: Array<{ app: INestApplication; url: string }>;
  let a: EventPublisher;
  let b: EventPublisher;
  let store: LiveStore;
  let redis: Redis;
  let nc: NatsConnection;
  let reader: EventReader;

  const outboxLength = () => redis.llen(store.keys.outbox());
  const stored = async (applicationId: string) =>
    (await reader.all()).filter((e) => e.event.applicationId === applicationId).map((e) => labelOf(e.event));
  const streamDown = () => reader.manager.streams.delete(reader.stream);

  beforeAll(async () => {
    replicas = await twoReplicas(ns);
    a = replicas[0]!.app.get(EventPublisher);
    b = replicas[1]!.app.get(EventPublisher);
    store = replicas[0]!.app.get(LiveStore);
    redis = replicas[0]!.app.get<Redis>(REDIS);
    nc = await connect({ servers: testServers().natsUrl });
    reader = await EventReader.open(nc, ns);
  });

  afterAll(async () => {
    await reader?.manager.streams.delete(reader.stream).catch(() => undefined);
    await nc?.close();
    for (const r of replicas ?? []) await r.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('an event published while others wait in the outbox is stored after them, though another replica parked them', async () => {
    const app = 'app-order';
    await streamDown();
    await expect(a.publish([labelled(app, 'x1'), labelled(app, 'x2')])).rejects.toMatchObject({ code: 'Unavailable' });
    expect(await outboxLength()).toBe(2);
    // The stream is back; the relay has not run yet. Replica B, which parked nothing itself, publishes.
    await a.ensureStream();
    await b.publish([labelled(app, 'y')]);
    // Whatever is still parked goes now.
    await a.relayOutbox();
    expect(await stored(app)).toEqual(['x1', 'x2', 'y']);
    expect(await outboxLength()).toBe(0);
    // Once the outbox is empty, events go straight to the stream again.
    await b.publish([labelled(app, 'z')]);
    await a.publish([labelled(app, 'z2')]);
    expect(await stored(app)).toEqual(['x1', 'x2', 'y', 'z', 'z2']);
    expect(await outboxLength()).toBe(0);
  });

  it('an operation answered Unavailable while others wait keeps its place: its events are stored after theirs and before later ones', async () => {
    const app = 'app-queue';
    await streamDown();
    await expect(a.publish([labelled(app, 'x1')])).rejects.toMatchObject({ code: 'Unavailable' });
    await expect(b.publish([labelled(app, 'x2'), labelled(app, 'x3')])).rejects.toMatchObject({ code: 'Unavailable' });
    await expect(a.publish([labelled(app, 'x4')])).rejects.toMatchObject({ code: 'Unavailable' });
    expect(await outboxLength()).toBe(4);
    await b.ensureStream();
    await a.publish([labelled(app, 'y')]);
    await b.relayOutbox();
    expect(await stored(app)).toEqual(['x1', 'x2', 'x3', 'x4', 'y']);
    expect(await outboxLength()).toBe(0);
  });

  it('relays running at once (two replicas, a pass overlapping the next) publish every parked event once, in order', async () => {
    const app = 'app-relays';
    const parked = Array.from({ length: 20 }, (_, i) => labelled(app, `p${i}`));
    await streamDown();
    await expect(a.publish(parked)).rejects.toMatchObject({ code: 'Unavailable' });
    expect(await outboxLength()).toBe(20);
    await a.ensureStream();
    // Every publish on the stream's subjects, duplicates included (the stream would drop those).
    const sent = new Map<string, number>();
    const sub: Subscription = nc.subscribe(eventSubject(ns, '>'), {
      callback: (err, msg) => {
        if (err) return;
        const e = JSON.parse(decoder.decode(msg.data)) as DomainEvent;
        if (e.applicationId === app) sent.set(labelOf(e), (sent.get(labelOf(e)) ?? 0) + 1);
      },
    });
    await nc.flush();
    await Promise.all([a.relayOutbox(), b.relayOutbox(), a.relayOutbox(), b.relayOutbox()]);
    await waitFor(
      async () => (await outboxLength()) === 0 || (await Promise.all([a.relayOutbox(), b.relayOutbox()]), false),
      { timeoutMs: 10000, description: 'the outbox to be relayed' },
    );
    await waitFor(() => sent.size === 20, { description: 'every relayed publish to be seen' });
    await nc.flush();
    sub.unsubscribe();
    expect([...sent.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(await stored(app)).toEqual(parked.map(labelOf));
  });

  it('an event the stream can never take (larger than max_payload) is set aside; the events behind it are relayed, in order', async () => {
    const app = 'app-poison';
    const big = labelled(app, 'x'.repeat(1100 * 1024));
    await streamDown();
    await expect(a.publish([labelled(app, 'before')])).rejects.toMatchObject({ code: 'Unavailable' });
    await expect(b.publish([big])).rejects.toMatchObject({ code: 'Unavailable' });
    await expect(a.publish([labelled(app, 'after')])).rejects.toMatchObject({ code: 'Unavailable' });
    expect(await outboxLength()).toBe(3);
    await a.ensureStream();
    await waitFor(async () => (await a.relayOutbox(), await outboxLength()) === 0, {
      timeoutMs: 10000,
      description: 'the outbox to be relayed',
    });
    expect(await stored(app)).toEqual(['before', 'after']);
    // Kept aside in Redis for an operator, not lost silently.
    const refused = (await redis.lrange(`${store.keys.outbox()}:refused`, 0, -1)).map(
      (s) => (JSON.parse(s) as DomainEvent).event.id,
    );
    expect(refused).toEqual([big.event.id]);
    // Nothing is held back any more.
    await b.publish([labelled(app, 'later')]);
    expect(await stored(app)).toEqual(['before', 'after', 'later']);
  });
});

describe('the outbox across a NATS crash, two replicas', () => {
  const ns = testNamespace('outbox-crash');
  let nats: OwnNatsServer;
  let replicas: Array<{ app: INestApplication; url: string }>;
  let nc: NatsConnection;
  let reader: EventReader;

  beforeAll(async () => {
    nats = await startNatsServer();
    replicas = await twoReplicas(ns, { NATS_URL: nats.url, EVENT_PUBLISH_TIMEOUT_MS: '500' });
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    reader = await EventReader.open(nc, ns);
  });

  afterAll(async () => {
    await nc?.close();
    for (const r of replicas ?? []) await r.app.close();
    await nats?.stop();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('events parked while NATS is down are stored once, before the events published after it is back', async () => {
    const app = 'app-crash';
    const [a, b] = replicas.map((r) => r.app.get(EventPublisher)) as [EventPublisher, EventPublisher];
    const store = replicas[0]!.app.get(LiveStore);
    const redis = replicas[0]!.app.get<Redis>(REDIS);
    await b.publish([labelled(app, 's0')]);
    await nats.kill();
    await expect(a.publish([labelled(app, 'x1'), labelled(app, 'x2')])).rejects.toMatchObject({ code: 'Unavailable' });
    await expect(b.publish([labelled(app, 'x3')])).rejects.toMatchObject({ code: 'Unavailable' });
    await nats.start();
    for (const r of replicas)
      await waitFor(async () => (await fetch(`${r.url}/readyz`)).status === 200, {
        timeoutMs: 20000,
        description: 'the replica to be ready again',
      });
    await waitFor(async () => (await reader.manager.streams.info(reader.stream)) !== null, {
      timeoutMs: 20000,
      description: 'the stream to be back',
    });
    await b.publish([labelled(app, 'y')]);
    await waitFor(async () => (await a.relayOutbox(), await redis.llen(store.keys.outbox())) === 0, {
      timeoutMs: 10000,
      description: 'the outbox to be relayed',
    });
    const events = (await reader.all()).filter((e) => e.event.applicationId === app);
    expect(events.map((e) => labelOf(e.event))).toEqual(['s0', 'x1', 'x2', 'x3', 'y']);
  });
});
