/**
 * Domain events on JetStream: one per lifecycle change, each a valid EventInfo with a unique id
 * sent as Nats-Msg-Id; a re-published id is stored once; when the stream is unavailable the caller
 * hears Unavailable and the events are relayed once it is back, none lost.
 */
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { eventSubject, WebhookValidators, type DomainEvent, type WebhookEventName } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import { EventPublisher } from './events/event-publisher.js';
import { LiveStore } from './store/live-store.js';
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  scopeOf,
  startRegistry,
} from './testing/harness.testing.js';
import type { Redis } from 'ioredis';
import { REDIS } from '@switchboard/service-kit';

const ORG = 'org-e';

describe('domain events', () => {
  const ns = testNamespace('events');
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let reader: EventReader;
  let gw: FakeGateway;

  beforeAll(async () => {
    registry = await startRegistry(
      registryEnv(ns, { EVENT_PUBLISH_TIMEOUT_MS: '300', REGISTRY_SWEEP_INTERVAL_MS: '100' }),
    );
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    reader = await EventReader.open(nc, ns);
    gw = await new FakeGateway('gw-e', nc, ns).start();
  });

  afterAll(async () => {
    gw?.stop();
    await reader?.manager.streams.delete(reader.stream).catch(() => undefined);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('every lifecycle change is one valid EventInfo with a unique id, on the subject of its type', async () => {
    const a = 'app-events';
    const c1 = { applicationId: a, userId: 'u1', deviceId: 'd1', clientId: 'c1' };
    const c2 = { applicationId: a, userId: 'u2', deviceId: 'd2', clientId: 'c2' };
    const ref = { client: c1, channelId: 'ch', connectionId: 'cn' };
    await rt.edge(registerReport(c1, ORG, 'gw-e'));
    await rt.edge(registerReport(c2, ORG, 'gw-e'));
    await rt.edge({ kind: 'client.join', client: c1, channelId: 'ch', claim: claim('ch') });
    await rt.edge({ kind: 'client.join', client: c2, channelId: 'ch', claim: claim('ch') });
    await rt.edge({ kind: 'client.update', client: c1, userAlias: 'Ann' });
    await rt.edge({ kind: 'client.stats', client: c1, stats: { bytesSent: 1200, roundTripTime: 20 } });
    await rt.edge({ kind: 'client.message', client: c1, channelId: 'ch', message: { message: 'hi' } });
    await rt.edge({ kind: 'client.message', client: c1, channelId: null, message: { message: 'to the server' } });
    await rt.edge({
      kind: 'connection.open',
      ...ref,
      type: 'peer',
      tag: 'cam',
      streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendonly', width: 640, height: 480 } },
    });
    for (const state of ['initializing', 'connecting', 'connected'] as const)
      await rt.edge({ kind: 'connection.state', ...ref, state });
    await rt.edge({ kind: 'connection.update', ...ref, localAudioMuted: true });
    await rt.edge({
      kind: 'connection.stats',
      ...ref,
      stats: { bytesReceived: 99, frameWidth: 1280, frameHeight: 720 },
    });
    await rt.command(scopeOf(ORG), {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'channel',
        applicationId: a,
        channelId: 'ch',
        patch: { recording: true, recordingTag: 'r', recordingMode: 'Audio' },
      },
    });
    // The recording mode alone: an event for the recording side, no settings push to the client.
    const settingsPushes = gw.of('settings').length;
    await rt.command(scopeOf(ORG), {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel', applicationId: a, channelId: 'ch', patch: { recordingMode: 'Video' } },
    });
    expect(gw.of('settings')).toHaveLength(settingsPushes);
    await rt.command(scopeOf(ORG), {
      kind: 'message',
      origin: 'api',
      target: { level: 'channel', applicationId: a, channelId: 'ch' },
      message: { message: 'from ops' },
    });
    await rt.command(scopeOf(ORG), {
      kind: 'message',
      origin: 'api',
      target: { level: 'user', applicationId: a, userId: 'u2' },
      message: { message: 'to you' },
    });
    await rt.edge({ kind: 'connection.state', ...ref, state: 'closing' });
    await rt.edge({ kind: 'connection.state', ...ref, state: 'closed' });
    await rt.edge({ kind: 'client.leave', client: c1, channelId: 'ch' });
    await rt.command(scopeOf(ORG), {
      kind: 'kick',
      origin: 'api',
      target: { level: 'channel', applicationId: a, channelId: 'ch' },
    });
    await rt.edge({ kind: 'client.unregister', client: c1, reason: 'left', gatewayId: 'gw-e' });

    const stored = (await reader.all()).filter((e) => e.event.applicationId === a);
    const types = stored.map((e) => e.event.event.type);
    const expected: WebhookEventName[] = [
      'client.registered',
      'client.registered',
      'channel.activated',
      'channel.client.joined',
      'channel.client.joined',
      'client.updated',
      'client.stats',
      'channel.client.message',
      'client.message',
      'connection.initializing',
      'connection.connecting',
      'connection.connected',
      'connection.updated',
      'connection.stats',
      'connection.updated', // the recording setting reached the connection
      'connection.updated', // the recording mode changed
      'channel.server.message',
      'server.message',
      'connection.closing',
      'connection.closed',
      'channel.client.left',
      'channel.client.left', // the kick
      'channel.deactivated',
      'client.unregistered',
    ];
    expect(types).toEqual(expected);
    const ids = new Set<string>();
    for (const { subject, msgId, event } of stored) {
      const e: DomainEvent = event;
      expect({ type: e.event.type, errors: WebhookValidators.EventInfo.errors(e.event) }).toEqual({
        type: e.event.type,
        errors: [],
      });
      expect(subject).toBe(eventSubject(ns, e.event.type));
      expect(msgId).toBe(e.event.id);
      expect(e.organizationId).toBe(ORG);
      ids.add(e.event.id);
    }
    expect(ids.size).toBe(stored.length);

    const of = (type: string) => stored.map((s) => s.event.event).filter((e) => e.type === type);
    expect(of('connection.updated')[1]!.connection).toEqual(
      expect.objectContaining({ recording: true, recordingTag: 'r', localAudioMuted: true }),
    );
    expect(of('connection.stats')[0]!.connection!.stats).toEqual(
      expect.objectContaining({ bytesReceived: 99, frameWidth: 1280 }),
    );
    // The video frame size travels with every connection event: described at first, then as sampled.
    const frameOf = (type: string, i = 0) =>
      (of(type)[i]!.connection as { videoStream?: { width: number | null; height: number | null } }).videoStream;
    expect(frameOf('connection.connected')).toEqual(expect.objectContaining({ width: 640, height: 480 }));
    expect(frameOf('connection.stats')).toEqual(expect.objectContaining({ width: 1280, height: 720 }));
    expect(frameOf('connection.closed')).toEqual(expect.objectContaining({ width: 1280, height: 720 }));
    // Beside the EventInfo, connection events carry the recording context (protocol, effective mode).
    const domainOf = (type: string, i = 0) =>
      stored.map((x) => x.event as DomainEvent & { recording?: unknown }).filter((e) => e.event.type === type)[i]!;
    expect(domainOf('connection.connected').recording).toEqual({ clientProtocol: 'websocket', recordingMode: null });
    expect(domainOf('connection.updated', 1).recording).toEqual({
      clientProtocol: 'websocket',
      recordingMode: 'Audio',
    });
    expect(domainOf('connection.updated', 2).recording).toEqual({
      clientProtocol: 'websocket',
      recordingMode: 'Video',
    });
    expect(of('client.stats')[0]!.client!.stats).toEqual(
      expect.objectContaining({ bytesSent: 1200, roundTripTime: 20 }),
    );
    expect(of('channel.client.message')[0]).toEqual(
      expect.objectContaining({
        origin: 'client',
        forced: false,
        channel: expect.objectContaining({ id: 'ch' }),
        message: expect.objectContaining({ message: 'hi', userId: 'u1', userAlias: 'Ann' }),
      }),
    );
    expect(of('channel.server.message')[0]).toEqual(
      expect.objectContaining({
        origin: 'api',
        forced: true,
        message: expect.objectContaining({ message: 'from ops' }),
      }),
    );
    expect(of('channel.client.left')[1]).toEqual(
      expect.objectContaining({ origin: 'api', forced: true, client: expect.objectContaining({ id: 'c2' }) }),
    );
    expect(of('client.unregistered')[0]!.client).toEqual(
      expect.objectContaining({ id: 'c1', userAlias: 'Ann', applicationId: a }),
    );
  });

  it('every event of one operation carries one timestamp (join, settings write, unregister), even while the local clock moves on between them', async () => {
    const a = 'app-moments';
    const c1 = { applicationId: a, userId: 'u1', deviceId: 'd1', clientId: 'c1' };
    const c2 = { applicationId: a, userId: 'u2', deviceId: 'd2', clientId: 'c2' };
    let seen = 0;
    /** The events of this application stored since the last call. */
    const next = async () => {
      const fresh = (await reader.all()).filter((e) => e.seq > seen && e.event.applicationId === a);
      seen = Math.max(seen, ...fresh.map((e) => e.seq));
      return fresh.map((e) => e.event.event);
    };
    const stamps = (events: Array<{ timestamp: number }>) => [...new Set(events.map((e) => e.timestamp))];
    await rt.edge(registerReport(c1, ORG, 'gw-e'));
    await rt.edge(registerReport(c2, ORG, 'gw-e'));
    await next();

    // A join that activates the channel: channel.activated and channel.client.joined, one moment.
    await withTickingClock(() => rt.edge({ kind: 'client.join', client: c1, channelId: 'ch1', claim: claim('ch1') }));
    const joined = await next();
    expect(joined.map((e) => e.type)).toEqual(['channel.activated', 'channel.client.joined']);
    expect(stamps(joined)).toHaveLength(1);

    await rt.edge({ kind: 'client.join', client: c2, channelId: 'ch1', claim: claim('ch1') });
    await rt.edge({ kind: 'client.join', client: c1, channelId: 'ch2', claim: claim('ch2') });
    for (const [channelId, connectionId] of [
      ['ch1', 'cn1'],
      ['ch1', 'cn2'],
      ['ch2', 'cn3'],
    ] as const) {
      await rt.edge({
        kind: 'connection.open',
        client: c1,
        channelId,
        connectionId,
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
    }
    await next();

    // One settings write reaching two connections: their connection.updated events, one moment.
    await withTickingClock(() =>
      rt.command(scopeOf(ORG), {
        kind: 'update',
        origin: 'api',
        target: { level: 'channel', applicationId: a, channelId: 'ch1', patch: { recordingMode: 'Audio' } },
      }),
    );
    const updated = await next();
    expect(updated.map((e) => [e.type, e.connection?.id])).toEqual(
      expect.arrayContaining([
        ['connection.updated', 'cn1'],
        ['connection.updated', 'cn2'],
      ]),
    );
    expect(updated).toHaveLength(2);
    expect(stamps(updated)).toHaveLength(1);

    // Unregistering closes three connections, leaves two channels (ch2 deactivates: c1 was its only
    // member) and forgets the client: every event of it at the moment the registry applied it.
    await withTickingClock(() => rt.edge({ kind: 'client.unregister', client: c1, reason: 'left', gatewayId: 'gw-e' }));
    const gone = await next();
    expect(gone.map((e) => e.type).sort()).toEqual(
      [
        'channel.client.left',
        'channel.client.left',
        'channel.deactivated',
        'client.unregistered',
        'connection.closed',
        'connection.closed',
        'connection.closed',
      ].sort(),
    );
    expect(gone.find((e) => e.type === 'channel.deactivated')!.channel!.id).toBe('ch2');
    expect(stamps(gone)).toHaveLength(1);
  });

  it('a server message to one client names it (client part); one to a user cannot, and names no client', async () => {
    const a = 'app-recipients';
    const c = { applicationId: a, userId: 'u9', deviceId: 'd9', clientId: 'c9' };
    await rt.edge(registerReport(c, ORG, 'gw-e', { userAlias: 'Nine', tag: 'desk', roles: ['host'] }));
    await rt.edge({ kind: 'client.join', client: c, channelId: 'room', claim: claim('room') });
    await rt.command(scopeOf(ORG), {
      kind: 'message',
      origin: 'api',
      target: { level: 'client', applicationId: a, userId: 'u9', deviceId: 'd9', clientId: 'c9' },
      message: { message: 'to c9' },
    });
    await rt.command(scopeOf(ORG), {
      kind: 'message',
      origin: 'api',
      target: {
        level: 'channel.client',
        applicationId: a,
        channelId: 'room',
        userId: 'u9',
        deviceId: 'd9',
        clientId: 'c9',
      },
      message: { message: 'to c9 in room' },
    });
    await rt.command(scopeOf(ORG), {
      kind: 'message',
      origin: 'api',
      target: { level: 'user', applicationId: a, userId: 'u9' },
      message: { message: 'to u9' },
    });
    const messages = (await reader.all())
      .filter((e) => e.event.applicationId === a && e.event.event.message)
      .map((e) => e.event.event);
    for (const e of messages)
      expect({ type: e.type, errors: WebhookValidators.EventInfo.errors(e) }).toEqual({ type: e.type, errors: [] });
    const recipient = {
      id: 'c9',
      userId: 'u9',
      deviceId: 'd9',
      userAlias: 'Nine',
      tag: 'desk',
      roles: ['host'],
      applicationId: a,
    };
    expect(messages.map((e) => [e.type, e.message!.message])).toEqual([
      ['server.message', 'to c9'],
      ['channel.server.message', 'to c9 in room'],
      ['server.message', 'to u9'],
    ]);
    expect(messages[0]!.client).toEqual(expect.objectContaining(recipient));
    expect(messages[1]).toEqual(
      expect.objectContaining({
        channel: expect.objectContaining({ id: 'room' }),
        client: expect.objectContaining(recipient),
      }),
    );
    expect(messages[2]!.client).toBeNull();
  });

  it('a re-published event id is stored once (duplicate window)', async () => {
    const before = (await reader.manager.streams.info(reader.stream)).state.messages;
    const js = jetstream(nc);
    const id = 'dup-test-id';
    const body = new TextEncoder().encode('{}');
    const first = await js.publish(eventSubject(ns, 'server.message'), body, { msgID: id });
    const second = await js.publish(eventSubject(ns, 'server.message'), body, { msgID: id });
    expect([first.duplicate, second.duplicate]).toEqual([false, true]);
    expect((await reader.manager.streams.info(reader.stream)).state.messages).toBe(before + 1);
    await reader.manager.streams.deleteMessage(reader.stream, first.seq);
  });

  it('while the stream is unavailable the caller hears Unavailable; the change stays and its events arrive later', async () => {
    const a = 'app-outage';
    const c = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' };
    await reader.manager.streams.delete(reader.stream);
    await expect(rt.edge(registerReport(c, ORG, 'gw-e'))).rejects.toMatchObject({ code: 'Unavailable' });
    await expect(
      rt.edge({ kind: 'client.join', client: c, channelId: 'ch', claim: claim('ch') }),
    ).rejects.toMatchObject({ code: 'Unavailable' });
    // The changes were applied.
    expect(await rt.query(OPERATOR, 'channel.get', { applicationId: a, channelId: 'ch' })).toEqual({
      id: 'ch',
      userCount: 1,
      deviceCount: 1,
      clientCount: 1,
      connectionCount: 0,
    });
    const store = registry.app.get(LiveStore);
    const redis = registry.app.get<Redis>(REDIS);
    expect(await redis.llen(store.keys.outbox())).toBe(3);
    // A retried report is idempotent: no second registration, no second join.
    await expect(rt.edge({ kind: 'client.join', client: c, channelId: 'ch', claim: claim('ch') })).resolves.toEqual(
      expect.objectContaining({ channel: expect.objectContaining({ clientCount: 1 }) }),
    );
    // The stream comes back; the housekeeping pass relays what was parked, in order.
    await registry.app.get(EventPublisher).ensureStream();
    await waitFor(async () => (await redis.llen(store.keys.outbox())) === 0, {
      timeoutMs: 10000,
      description: 'the parked events to be relayed',
    });
    const relayed = (await reader.all()).filter((e) => e.event.applicationId === a).map((e) => e.event.event.type);
    expect(relayed).toEqual(['client.registered', 'channel.activated', 'channel.client.joined']);
  });

  it('a sequence applied together while the stream is unavailable: its reports answer Unavailable from the first with events on, none is skipped', async () => {
    const a = 'app-outage-batch';
    const c = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' };
    const ref = { client: c, channelId: 'ch', connectionId: 'cn' };
    await reader.manager.streams.delete(reader.stream);
    const answer = (await rt.raw('runtime-registry.v1.edge', {
      report: {
        kind: 'batch',
        sequences: [
          [
            registerReport(c, ORG, 'gw-e'),
            { kind: 'client.join', client: c, channelId: 'ch', claim: claim('ch') },
            { kind: 'connection.open', ...ref, type: 'peer', tag: null, streams: { audio: { direction: 'sendrecv' } } },
            { kind: 'connection.state', ...ref, state: 'initializing' },
          ],
        ],
      },
    })) as { sequences: Array<Array<{ error?: { code: string } }>> };
    // All of them were applied (in one script run): each answers the error a report alone would
    // (applied, events late), and none is `skipped`, so the edge does not report them again.
    expect(answer.sequences[0]!.map((o) => o.error?.code)).toEqual([
      'Unavailable',
      'Unavailable',
      'Unavailable',
      'Unavailable',
    ]);
    expect(
      (
        await rt.query(OPERATOR, 'connection.get', {
          applicationId: a,
          channelId: 'ch',
          userId: 'u',
          deviceId: 'd',
          clientId: 'c',
          connectionId: 'cn',
        })
      ).state,
    ).toBe('initializing');
    const store = registry.app.get(LiveStore);
    const redis = registry.app.get<Redis>(REDIS);
    expect(await redis.llen(store.keys.outbox())).toBe(4);
    await registry.app.get(EventPublisher).ensureStream();
    await waitFor(async () => (await redis.llen(store.keys.outbox())) === 0, {
      timeoutMs: 10000,
      description: 'the parked events to be relayed',
    });
    const relayed = (await reader.all()).filter((e) => e.event.applicationId === a).map((e) => e.event.event.type);
    expect(relayed).toEqual([
      'client.registered',
      'channel.activated',
      'channel.client.joined',
      'connection.initializing',
    ]);
  });
});

/**
 * Runs `fn` while `Date.now()` moves on by 1 ms at every reading (on top of the real clock), so two
 * events of one operation stamped by separate readings would differ for sure, not only when a
 * millisecond happens to pass between them.
 */
async function withTickingClock<T>(fn: () => Promise<T>): Promise<T> {
  const real = Date.now;
  let ticks = 0;
  Date.now = () => real() + ++ticks;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}
