/**
 * Media servers, connectors, gateways and recording services: heartbeats over NATS, placement of
 * sfu/mcu connections on the least-loaded active media server, PATCH active, statistics from real
 * connection lifecycles, expiry of servers that stop heartbeating, and the clients of a gateway
 * replica that is gone.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { InterfaceAValidators, type Heartbeat } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import {
  claim,
  EventReader,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  scopeOf,
  startRegistry,
  WireError,
} from './testing/harness.testing.js';

const ORG = 'org-s';
const TENANT = scopeOf(ORG);
const [MS1, MS2, MS3] = [randomUUID(), randomUUID(), randomUUID()].sort();

function mediaServer(id: string, extra: Partial<Heartbeat['server']> = {}): Heartbeat {
  return {
    role: 'mediaserver',
    server: {
      id,
      region: 'eu-west',
      version: '1.2.3',
      addresses: [`udp://10.0.0.${id.slice(0, 2)}:3478`],
      active: true,
      lastHeartbeat: new Date().toISOString(),
      computer: {
        hostName: `host-${id.slice(0, 4)}`,
        ipAddresses: ['10.0.0.1'],
        processorCount: 8,
        memoryBytes: 16e9,
        region: 'eu-west',
        version: '1.2.3',
      },
      ...extra,
    },
  };
}

describe('runtime-registry servers', () => {
  const ns = testNamespace('servers');
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let events: EventReader;
  /** Servers the test keeps alive (heartbeat every 200 ms, well within the 1 s timeout). */
  const alive = new Map<string, Heartbeat>();
  let beating: NodeJS.Timeout;

  const a = 'app-media';
  const client = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' };
  let next = 0;

  /** Opens a connection in a channel of its own: a channel keeps its media server (placement.integration-spec). */
  async function open(type: 'sfu' | 'mcu' | 'peer' = 'sfu') {
    const channelId = `room-${next}`;
    const connectionId = `cn-${next++}`;
    await rt.edge({ kind: 'client.join', client, channelId, claim: claim(channelId) });
    const answer = await rt.edge({
      kind: 'connection.open',
      client,
      channelId,
      connectionId,
      type,
      tag: null,
      streams: { audio: { direction: 'sendrecv' } },
    });
    return { connectionId, channelId, mediaServerId: answer.mediaServerId };
  }

  async function stats(id: string) {
    const s = await rt.query(OPERATOR, 'mediaserver.stats', { mediaServerId: id });
    expect(InterfaceAValidators.MediaServerStatistics.errors(s)).toEqual([]);
    return s;
  }

  async function beat(hb: Heartbeat, keep = true) {
    if (keep) alive.set(`${hb.role}/${hb.server.id}`, hb);
    await rt.heartbeat(hb);
  }

  beforeAll(async () => {
    registry = await startRegistry(
      registryEnv(ns, {
        SERVER_HEARTBEAT_TIMEOUT_SECONDS: '1',
        SERVER_RETENTION_SECONDS: '3',
        CLIENT_DROP_GRACE_SECONDS: '0',
        REGISTRY_SWEEP_INTERVAL_MS: '100',
      }),
    );
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    events = await EventReader.open(nc, ns);
    beating = setInterval(() => {
      for (const hb of alive.values()) void rt.heartbeat(hb).catch(() => undefined);
    }, 200);
    await rt.edge(registerReport(client, ORG, 'gw-media'));
    await rt.edge({ kind: 'client.join', client, channelId: 'room', claim: claim('room') });
  });

  afterAll(async () => {
    clearInterval(beating);
    await events?.manager.streams.delete(events.stream).catch(() => undefined);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('an sfu or mcu connection needs a media server; a peer connection does not', async () => {
    await expect(open('sfu')).rejects.toMatchObject({ code: 'Unavailable' });
    // No media server is checked first: even a client that is not registered hears Unavailable.
    const stranger = { ...client, clientId: 'not-registered' };
    await expect(
      rt.edge({
        kind: 'connection.open',
        client: stranger,
        channelId: 'room',
        connectionId: 'cn-x',
        type: 'mcu',
        tag: null,
        streams: {},
      }),
    ).rejects.toMatchObject({ code: 'Unavailable' });
    expect((await open('peer')).mediaServerId).toBeNull();
  });

  it('places each new connection on the least-loaded active media server', async () => {
    for (const id of [MS1, MS2, MS3]) await beat(mediaServer(id));
    await waitFor(async () => (await rt.query(OPERATOR, 'mediaservers.list', {})).filter((m) => m.active).length === 3);
    const placed = [];
    for (let i = 0; i < 6; i++) placed.push((await open(i % 2 ? 'mcu' : 'sfu')).mediaServerId);
    // Ties go to the lowest id, so the order is deterministic: a round over the three servers, twice.
    expect(placed).toEqual([MS1, MS2, MS3, MS1, MS2, MS3]);
    for (const id of [MS1, MS2, MS3])
      expect(await stats(id)).toEqual(
        expect.objectContaining({ mediaServerId: id, pendingConnections: 2, activeConnections: 0 }),
      );
    const server = await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: MS1 });
    expect(InterfaceAValidators.MediaServer.errors(server)).toEqual([]);
    expect(server).toEqual({
      id: MS1,
      active: true,
      applications: [a],
      computer: expect.objectContaining({ hostName: `host-${MS1.slice(0, 4)}`, processorCount: 8 }),
    });
  });

  it('an open refused after a media server was found leaves the statistics as they were', async () => {
    const before = await rt.query(OPERATOR, 'mediaservers.stats', {});
    const taken = await open();
    const afterOpen = await stats(taken.mediaServerId!);
    await expect(
      rt.edge({
        kind: 'connection.open',
        client,
        channelId: taken.channelId,
        connectionId: taken.connectionId,
        type: 'sfu',
        tag: null,
        streams: {},
      }),
    ).rejects.toMatchObject({ code: 'Conflict' });
    await expect(
      rt.edge({
        kind: 'connection.open',
        client,
        channelId: 'elsewhere',
        connectionId: 'cn-elsewhere',
        type: 'sfu',
        tag: null,
        streams: {},
      }),
    ).rejects.toMatchObject({ code: 'NotFound' });
    expect(await stats(taken.mediaServerId!)).toEqual(afterOpen);
    expect((await rt.query(OPERATOR, 'mediaservers.stats', {})).reduce((n, s) => n + s.pendingConnections, 0)).toBe(
      before.reduce((n, s) => n + s.pendingConnections, 0) + 1,
    );
    // Closed again: the later tests count placements from an even load.
    await rt.edge({ kind: 'connection.close', client, channelId: taken.channelId, connectionId: taken.connectionId });
    expect((await stats(taken.mediaServerId!)).pendingConnections).toBe(afterOpen.pendingConnections - 1);
  });

  it('PATCH active:false moves every new placement to the others; active:true brings it back', async () => {
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: MS1, patch: { active: false } });
    expect((await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: MS1 })).active).toBe(false);
    const placed = [];
    for (let i = 0; i < 4; i++) placed.push((await open()).mediaServerId);
    expect(placed).not.toContain(MS1);
    const byId = (x: string | null, y: string | null) => String(x).localeCompare(String(y));
    expect(placed.sort(byId)).toEqual([MS2, MS2, MS3, MS3].sort(byId));
    expect((await stats(MS1)).pendingConnections).toBe(2);
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: MS1, patch: { active: true } });
    expect((await open()).mediaServerId).toBe(MS1); // now the least loaded
    await expect(
      rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: randomUUID(), patch: { active: false } }),
    ).rejects.toMatchObject({ code: 'NotFound' });
    await expect(rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: randomUUID() })).rejects.toMatchObject({
      code: 'NotFound',
    });
  });

  it('keeps statistics from the connection lifecycles', async () => {
    const target = await open();
    const ms = target.mediaServerId!;
    const before = await stats(ms);
    const ref = { client, channelId: target.channelId, connectionId: target.connectionId };
    for (const state of ['initializing', 'connecting', 'connected'] as const)
      await rt.edge({ kind: 'connection.state', ...ref, state });
    expect(await stats(ms)).toEqual({
      ...before,
      pendingConnections: before.pendingConnections - 1,
      activeConnections: before.activeConnections + 1,
    });
    await rt.edge({
      kind: 'connection.state',
      ...ref,
      state: 'failing',
      error: { code: 'ice', message: 'ICE failed' },
    });
    await rt.edge({ kind: 'connection.state', ...ref, state: 'failed' });
    const afterFail = await stats(ms);
    expect(afterFail).toEqual(
      expect.objectContaining({
        pendingConnections: before.pendingConnections - 1,
        activeConnections: before.activeConnections,
        totalFailedConnections: before.totalFailedConnections + 1,
        totalClosedConnections: before.totalClosedConnections,
      }),
    );
    expect(afterFail.durationFailedConnections).toBeGreaterThanOrEqual(before.durationFailedConnections);
    expect(afterFail.durationSeconds).toBeGreaterThanOrEqual(afterFail.durationFailedConnections);
    // A closed connection counts as closed and leaves the load.
    const other = await open();
    const otherBefore = await stats(other.mediaServerId!);
    await rt.edge({ kind: 'connection.close', client, channelId: other.channelId, connectionId: other.connectionId });
    expect(await stats(other.mediaServerId!)).toEqual(
      expect.objectContaining({
        pendingConnections: otherBefore.pendingConnections - 1,
        totalClosedConnections: otherBefore.totalClosedConnections + 1,
      }),
    );
    // The failure reached the event stream with its error.
    const failed = (await events.all()).find(
      (e) => e.event.event.type === 'connection.failed' && e.event.event.connection?.id === target.connectionId,
    );
    expect(failed?.event.event.connection?.error).toEqual({ code: 'ice', message: 'ICE failed' });
  });

  it('respects a media server capacity', async () => {
    const small = randomUUID();
    const totals = await rt.query(OPERATOR, 'mediaservers.stats', {});
    for (const s of totals) expect(InterfaceAValidators.MediaServerStatistics.errors(s)).toEqual([]);
    // Disable the others so only the small one could take connections.
    for (const id of [MS1, MS2, MS3])
      await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: id, patch: { active: false } });
    await beat(mediaServer(small, { capacity: 1 }));
    await waitFor(
      async () =>
        (await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: small }).catch(() => null))?.active === true,
    );
    expect((await open()).mediaServerId).toBe(small);
    await expect(open()).rejects.toMatchObject({ code: 'Unavailable' });
    for (const id of [MS1, MS2, MS3])
      await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: id, patch: { active: true } });
    alive.delete(`mediaserver/${small}`);
  });

  it('a media server that stops heartbeating is gone: listed inactive, given nothing, forgotten after the retention', async () => {
    alive.delete(`mediaserver/${MS3}`);
    await waitFor(async () => (await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: MS3 })).active === false, {
      timeoutMs: 10000,
      description: 'MS3 to be gone',
    });
    for (let i = 0; i < 4; i++) expect([MS1, MS2]).toContain((await open()).mediaServerId);
    await waitFor(async () => !(await rt.query(OPERATOR, 'mediaservers.list', {})).some((m) => m.id === MS3), {
      timeoutMs: 15000,
      description: 'MS3 to be forgotten',
    });
    await expect(rt.query(OPERATOR, 'mediaserver.stats', { mediaServerId: MS3 })).rejects.toBeInstanceOf(WireError);
  });

  it('a heartbeat announcing a shutdown makes the server gone at once', async () => {
    const leaving = randomUUID();
    await beat(mediaServer(leaving), false);
    await waitFor(
      async () =>
        (await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: leaving }).catch(() => null))?.active === true,
    );
    await beat(mediaServer(leaving, { active: false }), false);
    await waitFor(
      async () => (await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: leaving })).active === false,
    );
  });

  it('the environment lists gateways, media servers, connectors and recording services; connectors are listed too', async () => {
    await beat({
      role: 'gateway',
      server: {
        id: 'gw-live',
        region: null,
        version: '0.1.0',
        addresses: ['ws://127.0.0.1:8080/sync'],
        active: true,
        lastHeartbeat: new Date().toISOString(),
      },
    });
    await beat({
      role: 'connector',
      type: 'sip',
      server: {
        id: 'sip-1',
        region: 'eu',
        version: '2',
        addresses: ['sip:10.0.0.9'],
        active: true,
        lastHeartbeat: new Date().toISOString(),
      },
    });
    await beat({
      role: 'recording',
      server: {
        id: 'rec-1',
        region: null,
        version: '1',
        addresses: [],
        active: true,
        lastHeartbeat: new Date().toISOString(),
      },
    });
    const env = await waitFor(async () => {
      const e = await rt.query(TENANT, 'application.environment', { applicationId: a });
      return e.gateways.length && e.connectors.length && e.recordingMuxers.length ? e : null;
    });
    expect(InterfaceAValidators.ApplicationEnvironment.errors(env)).toEqual([]);
    expect(env.externalSyncUrl).toMatch(/^wss?:\/\//);
    expect(env.gateways.map((g) => [g.id, g.active, g.addresses])).toEqual([
      ['gw-live', true, ['ws://127.0.0.1:8080/sync']],
    ]);
    expect(
      env.mediaServers
        .filter((m) => m.active)
        .map((m) => m.id)
        .sort(),
    ).toEqual([MS1, MS2].sort());
    expect(env.connectors.map((c) => c.id)).toEqual(['sip-1']);
    expect([env.recordingMonitors, env.recordingMuxers, env.recordingMovers].map((l) => l.map((r) => r.id))).toEqual([
      ['rec-1'],
      ['rec-1'],
      ['rec-1'],
    ]);
    const connectors = await rt.query(OPERATOR, 'connectors.list', {});
    expect(connectors).toEqual([
      {
        id: 'sip-1',
        type: 'sip',
        region: 'eu',
        version: '2',
        addresses: ['sip:10.0.0.9'],
        active: true,
        lastHeartbeat: expect.any(String),
      },
    ]);
    // A heartbeat that is not one is ignored.
    nc.publish(`${ns}.runtime-registry.v1.heartbeat`, new TextEncoder().encode('{"role":"toaster"}'));
  });

  it('the clients of a gateway that stopped heartbeating are unregistered after the grace period', async () => {
    const b = 'app-gone-gateway';
    const gone = `gw-gone-${randomUUID()}`;
    await beat(
      {
        role: 'gateway',
        server: {
          id: gone,
          region: null,
          version: '0.1.0',
          addresses: [],
          active: true,
          lastHeartbeat: new Date().toISOString(),
        },
      },
      false,
    );
    const c1 = { applicationId: b, userId: 'u', deviceId: 'd', clientId: 'c1' };
    const c2 = { ...c1, clientId: 'c2' };
    await rt.edge(registerReport(c1, ORG, gone));
    await rt.edge(registerReport(c2, ORG, 'gw-live'));
    await rt.edge({ kind: 'client.join', client: c1, channelId: 'x', claim: claim('x') });
    await rt.edge({
      kind: 'connection.open',
      client: c1,
      channelId: 'x',
      connectionId: 'k',
      type: 'peer',
      tag: null,
      streams: {},
    });
    await waitFor(async () => (await rt.query(TENANT, 'application.get', { applicationId: b })).clientCount === 1, {
      timeoutMs: 15000,
      description: 'the clients of the gone gateway to be dropped',
    });
    expect(
      (await rt.query(TENANT, 'device.clients', { applicationId: b, userId: 'u', deviceId: 'd' })).map((c) => c.id),
    ).toEqual(['c2']);
    const mine = (await events.all())
      .map((e) => e.event.event)
      .filter((e) => e.client?.applicationId === b && e.client.id === 'c1');
    expect(mine.map((e) => e.type)).toEqual([
      'client.registered',
      'channel.activated',
      'channel.client.joined',
      'connection.closed',
      'channel.client.left',
      'channel.deactivated',
      'client.unregistered',
    ]);
    expect(mine.slice(3).every((e) => e.origin === 'server' && e.forced)).toBe(true);
  });
});
