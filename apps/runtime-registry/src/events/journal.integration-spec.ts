/**
 * The operation journal, with two registry replicas (real NATS and Redis): a replica that stops
 * after a change and before its events are stored loses none of them. The other replica's
 * housekeeping pass publishes them, with the ids the first would have given them, and sends the
 * sends no late pushes (the gateways' reconcile brings their sessions up to date); events published
 * before the stop are not stored twice.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import type { DomainEvent, EdgeReport } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import { CommandService } from '../runtime/command.service.js';
import { ChangeDelivery } from '../runtime/change-delivery.js';
import { EdgeService } from '../runtime/edge.service.js';
import { Sweeper } from '../servers/sweeper.js';
import { LiveStore } from '../store/live-store.js';
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  registerReport,
  registryEnv,
  scopeOf,
  startRegistry,
  type Received,
} from '../testing/harness.testing.js';
import { EventPublisher } from './event-publisher.js';
import { journalEventId, OperationJournal } from './journal.js';
import type { Redis } from 'ioredis';
import { REDIS } from '@switchboard/service-kit';

const ORG = 'org-journal';
const GW = 'gw-journal';
/** EVENT_PUBLISH_TIMEOUT_MS of the replicas: an entry is recovered once older than this + 5 s. */
const PUBLISH_TIMEOUT_MS = 300;

interface Replica {
  app: INestApplication;
  edge: EdgeService;
  commands: CommandService;
  delivery: ChangeDelivery;
}

/**
 * One client's life, applied through a replica's services in this process (so that one replica
 * can be cut off at a chosen point): every operation that journals its change. `applied` runs an
 * operation and waits until its change is applied.
 */
/** The operations of `life` that are not journaled (an open). */
const NOT_JOURNALED = 1;

async function life(r: Replica, a: string, applied: (op: () => Promise<unknown>) => Promise<void>) {
  const c1 = { applicationId: a, userId: 'u1', deviceId: 'd1', clientId: 'c1' };
  const c2 = { applicationId: a, userId: 'u2', deviceId: 'd2', clientId: 'c2' };
  const cn = { client: c1, channelId: 'ch', connectionId: 'cn' };
  const cn2 = { client: c1, channelId: 'ch', connectionId: 'cn2' };
  const scope = scopeOf(ORG);
  // What a client reports on connecting, applied as one script run.
  const connecting: EdgeReport[] = [
    registerReport(c1, ORG, GW),
    { kind: 'client.join', client: c1, channelId: 'ch', claim: claim('ch') },
    { kind: 'connection.open', ...cn, type: 'peer', tag: null, streams: { audio: { direction: 'sendrecv' } } },
    { kind: 'connection.state', ...cn, state: 'initializing' },
  ];
  await applied(() => r.edge.together(connecting));
  await applied(() => r.edge.handle(registerReport(c2, ORG, GW)));
  await applied(() => r.edge.handle({ kind: 'client.join', client: c2, channelId: 'ch', claim: claim('ch') }));
  await applied(() => r.edge.handle({ kind: 'connection.state', ...cn, state: 'connecting' }));
  await applied(() =>
    r.commands.handle(scope, {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'channel',
        applicationId: a,
        channelId: 'ch',
        patch: { audioUnmuteDisabled: true, recordingMode: 'Audio' },
      },
    }),
  );
  // An open causes no event, so it is not journaled (OPENS_CUT_OFF).
  await applied(() =>
    r.edge.handle({
      kind: 'connection.open',
      ...cn2,
      type: 'peer',
      tag: null,
      streams: { audio: { direction: 'sendrecv' } },
    }),
  );
  await applied(() =>
    r.commands.handle(scope, {
      kind: 'kick',
      origin: 'api',
      target: {
        level: 'connection',
        applicationId: a,
        channelId: 'ch',
        userId: 'u1',
        deviceId: 'd1',
        clientId: 'c1',
        connectionId: 'cn2',
      },
    }),
  );
  await applied(() =>
    r.commands.handle(scope, {
      kind: 'kick',
      origin: 'api',
      target: {
        level: 'channel.client',
        applicationId: a,
        channelId: 'ch',
        userId: 'u2',
        deviceId: 'd2',
        clientId: 'c2',
      },
    }),
  );
  await applied(() => r.edge.handle({ kind: 'connection.close', ...cn }));
  await applied(() => r.edge.handle({ kind: 'client.leave', client: c1, channelId: 'ch' }));
  await applied(() => r.edge.handle({ kind: 'client.unregister', client: c1, reason: 'left', gatewayId: GW }));
}

describe('the operation journal, two replicas', () => {
  const ns = testNamespace('journal');
  let replicas: Replica[];
  let nc: NatsConnection;
  let reader: EventReader;
  let gw: FakeGateway;
  let store: LiveStore;
  let redis: Redis;

  const stored = async (a: string) => (await reader.all()).filter((e) => e.event.applicationId === a);
  /** What an event says, but for its id and times (which differ between two runs) and its application. */
  const gist = (e: DomainEvent) => {
    const x = e.event;
    return {
      type: x.type,
      origin: x.origin,
      forced: x.forced,
      channel: x.channel?.id,
      client: x.client?.id,
      connection: x.connection?.id,
      state: x.connection?.state,
      recording: (e as { recording?: unknown }).recording,
    };
  };
  const pushesOf = (a: string) => gw.received.filter((p: Received) => p.applicationId === a).map((p) => p.push);
  const entries = async () => redis.hgetall(store.keys.journal());

  beforeAll(async () => {
    // No housekeeping pass runs by itself: the tests run them.
    const env = registryEnv(ns, {
      EVENT_PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS),
      REGISTRY_SWEEP_INTERVAL_MS: '600000',
    });
    replicas = [];
    for (let i = 0; i < 2; i++) {
      const { app } = await startRegistry(env);
      replicas.push({
        app,
        edge: app.get(EdgeService),
        commands: app.get(CommandService),
        delivery: app.get(ChangeDelivery),
      });
    }
    store = replicas[0]!.app.get(LiveStore);
    redis = replicas[0]!.app.get<Redis>(REDIS);
    nc = await natsConnection();
    reader = await EventReader.open(nc, ns);
    gw = await new FakeGateway(GW, nc, ns).start();
  });

  afterAll(async () => {
    gw?.stop();
    await reader?.manager.streams.delete(reader.stream).catch(() => undefined);
    await nc?.close();
    for (const r of replicas ?? []) await r.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('a replica stopped after each change and before its events: the other replica publishes them all, with their ids, and no late push', async () => {
    const [a, b] = replicas as [Replica, Replica];
    // The reference: the same life on a replica that runs through.
    await life(b, 'app-live', (op) => op().then(() => undefined));
    const live = await stored('app-live');
    expect(live.length).toBeGreaterThan(10);

    // Replica A stops (as if killed) once a change is applied and its events are built: nothing
    // of them reaches NATS, and the operation never answers.
    let reached = 0;
    a.delivery.deliver = () => {
      reached++;
      return new Promise<void>(() => undefined);
    };
    try {
      await life(a, 'app-cut', async (op) => {
        const before = reached;
        void op();
        await waitFor(() => reached > before, { description: 'the change to be applied' });
      });
    } finally {
      // The class's own again, for the next test.
      delete (a.delivery as Partial<ChangeDelivery>).deliver;
    }
    expect(await stored('app-cut')).toEqual([]);
    expect(pushesOf('app-cut')).toEqual([]);
    const journaled = await entries();
    expect(Object.keys(journaled)).toHaveLength(reached - NOT_JOURNALED);

    // Retried on B, the leave and the close change nothing, so emit nothing.
    const c1 = { applicationId: 'app-cut', userId: 'u1', deviceId: 'd1', clientId: 'c1' };
    await b.edge.handle({ kind: 'connection.close', client: c1, channelId: 'ch', connectionId: 'cn' });
    await b.edge.handle({ kind: 'client.leave', client: c1, channelId: 'ch' });
    expect(await stored('app-cut')).toEqual([]);

    // Too recent yet: their replica may still be publishing them.
    await b.app.get(Sweeper).pass();
    expect(await stored('app-cut')).toEqual([]);

    await new Promise((resolve) => setTimeout(resolve, PUBLISH_TIMEOUT_MS + 5500));
    await b.app.get(Sweeper).pass();
    const recovered = await stored('app-cut');
    // The events the running replica published, in the same order, saying the same.
    expect(recovered.map((e) => gist(e.event))).toEqual(live.map((e) => gist(e.event)));
    // With the ids their replica gave them: derived from the journal entries.
    const expectedIds = new Set(
      Object.keys(journaled).flatMap((id) => Array.from({ length: 20 }, (_, i) => journalEventId(id, i))),
    );
    for (const e of recovered) {
      expect(expectedIds.has(e.event.event.id)).toBe(true);
      expect(e.msgId).toBe(e.event.event.id);
    }
    // No push this late: the running replica's were these, the gateway's reconcile sees to them.
    expect(pushesOf('app-live').map((p) => p.type)).toEqual(['settings', 'kicked', 'kicked']);
    expect(pushesOf('app-cut')).toEqual([]);
    expect(await entries()).toEqual({});

    // Nothing more on the next pass.
    await b.app.get(Sweeper).pass();
    expect(await stored('app-cut')).toHaveLength(recovered.length);
  }, 30000);

  it('while the stream is unavailable, a pass parks the events of the oldest entry and leaves the rest for the next', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const app = 'app-down';
    let reached = 0;
    a.delivery.deliver = () => {
      reached++;
      return new Promise<void>(() => undefined);
    };
    try {
      for (const clientId of ['c1', 'c2']) {
        void a.edge.handle(registerReport({ applicationId: app, userId: 'u', deviceId: 'd', clientId }, ORG, GW));
        await waitFor(() => reached > (clientId === 'c1' ? 0 : 1), { description: 'the register to be applied' });
      }
    } finally {
      delete (a.delivery as Partial<ChangeDelivery>).deliver;
    }
    expect(Object.keys(await entries())).toHaveLength(2);
    await reader.manager.streams.delete(reader.stream);
    await new Promise((resolve) => setTimeout(resolve, PUBLISH_TIMEOUT_MS + 5500));
    await b.app.get(Sweeper).pass();
    // The first entry's event is parked (late, not lost); the second waits in the journal.
    expect(await redis.llen(store.keys.outbox())).toBe(1);
    expect(Object.keys(await entries())).toHaveLength(1);
    await b.app.get(EventPublisher).ensureStream();
    await b.app.get(Sweeper).pass();
    await waitFor(
      async () => (await redis.llen(store.keys.outbox())) === 0 || (await b.app.get(Sweeper).pass(), false),
      { description: 'the outbox to be relayed' },
    );
    expect((await stored(app)).map((e) => [e.event.event.type, e.event.event.client?.id])).toEqual([
      ['client.registered', 'c1'],
      ['client.registered', 'c2'],
    ]);
    expect(await entries()).toEqual({});
  }, 30000);

  it('a replica stopped after publishing and before removing its entries: the events are not stored twice', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const journal = a.app.get(OperationJournal);
    journal.close = () => undefined;
    try {
      await life(a, 'app-late', (op) => op().then(() => undefined));
    } finally {
      delete (journal as Partial<OperationJournal>).close;
    }
    const published = await stored('app-late');
    expect(published.length).toBeGreaterThan(10);
    expect(Object.keys(await entries()).length).toBeGreaterThan(5);

    await new Promise((resolve) => setTimeout(resolve, PUBLISH_TIMEOUT_MS + 5500));
    await b.app.get(Sweeper).pass();
    expect(await entries()).toEqual({});
    // The stream took the republished ids for the duplicates they are.
    expect((await stored('app-late')).map((e) => e.event.event.id)).toEqual(published.map((e) => e.event.event.id));
  }, 30000);
});
