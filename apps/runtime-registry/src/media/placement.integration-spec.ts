/**
 * Placement per channel: the sfu connections of a channel share one media server (its mcu ones too),
 * kept while it heartbeats and is not stopping (even disabled or at capacity), given up when the
 * channel deactivates; a downstream sfu connection goes where its upstream is. A `janus` media
 * server's connections are connected only by their media server, not by the client's report.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import type { Heartbeat } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import {
  claim,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  startRegistry,
  type TestClient,
} from '../testing/harness.testing.js';

const ORG = 'org-place';
const [MS1, MS2] = [randomUUID(), randomUUID()].sort();

function mediaServer(id: string, extra: Partial<Heartbeat['server']> = {}, type?: string): Heartbeat {
  return {
    role: 'mediaserver',
    ...(type ? { type } : {}),
    server: {
      id,
      region: null,
      version: '1',
      addresses: ['udp://10.0.0.1:3478'],
      active: true,
      lastHeartbeat: new Date().toISOString(),
      ...extra,
    },
  } as Heartbeat;
}

describe('runtime-registry placement per channel', () => {
  const ns = testNamespace('placement');
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  const alive = new Map<string, Heartbeat>();
  let beating: NodeJS.Timeout;
  const a = 'app-placement';
  const alice: TestClient = { applicationId: a, userId: 'alice', deviceId: 'd', clientId: 'c' };
  const bob: TestClient = { applicationId: a, userId: 'bob', deviceId: 'd', clientId: 'c' };
  let next = 0;

  async function open(
    client: TestClient,
    channelId: string,
    type: 'sfu' | 'mcu' = 'sfu',
    remoteConnectionId?: string,
  ): Promise<{ connectionId: string; mediaServerId: string | null }> {
    const connectionId = `cn-${next++}`;
    const answer = await rt.edge({
      kind: 'connection.open',
      client,
      channelId,
      connectionId,
      type,
      tag: null,
      streams: { audio: { direction: remoteConnectionId ? 'recvonly' : 'sendrecv' } },
      ...(remoteConnectionId ? { remoteConnectionId } : {}),
    });
    return { connectionId, mediaServerId: answer.mediaServerId };
  }

  async function join(channelId: string, ...clients: TestClient[]) {
    for (const c of clients) await rt.edge({ kind: 'client.join', client: c, channelId, claim: claim(channelId) });
  }

  async function beat(hb: Heartbeat) {
    alive.set(hb.server.id, hb);
    await rt.heartbeat(hb);
  }

  const activeServers = async () =>
    (await rt.query(OPERATOR, 'mediaservers.list', {})).filter((m) => m.active).map((m) => m.id);

  beforeAll(async () => {
    registry = await startRegistry(registryEnv(ns, { SERVER_HEARTBEAT_TIMEOUT_SECONDS: '1' }));
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    beating = setInterval(() => {
      for (const hb of alive.values()) void rt.heartbeat(hb).catch(() => undefined);
    }, 200);
    for (const c of [alice, bob]) await rt.edge(registerReport(c, ORG, 'gw-place'));
    await beat(mediaServer(MS1));
    await beat(mediaServer(MS2));
    await waitFor(async () => (await activeServers()).length === 2);
  });

  afterAll(async () => {
    clearInterval(beating);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('puts two channels on two servers, and every connection of a channel on its own', async () => {
    await join('one', alice, bob);
    await join('two', alice, bob);
    const first = await open(alice, 'one');
    const second = await open(alice, 'two');
    expect([first.mediaServerId, second.mediaServerId]).toEqual([MS1, MS2]);
    // MS1 is as loaded as MS2 from here on, yet channel one stays on MS1 and two on MS2.
    for (let i = 0; i < 3; i++) {
      expect((await open(bob, 'one')).mediaServerId).toBe(MS1);
      expect((await open(alice, 'two', 'mcu')).mediaServerId).toBe(MS2);
    }
    expect((await open(bob, 'one', 'mcu')).mediaServerId).toBe(MS1);
  });

  it('a downstream sfu connection goes where its upstream is, and must name an open upstream of the channel', async () => {
    await join('down', alice, bob);
    const upstream = await open(alice, 'down');
    expect((await open(bob, 'down', 'sfu', upstream.connectionId)).mediaServerId).toBe(upstream.mediaServerId);
    const downstream = await open(bob, 'down', 'sfu', upstream.connectionId);
    for (const remote of ['nobody', downstream.connectionId])
      await expect(open(bob, 'down', 'sfu', remote)).rejects.toMatchObject({
        code: 'ValidationFailed',
        message: expect.stringContaining('remoteConnectionId'),
      });
    const mcu = await open(alice, 'down', 'mcu');
    await expect(open(bob, 'down', 'sfu', mcu.connectionId)).rejects.toMatchObject({ code: 'ValidationFailed' });
    // An upstream of another channel is not one of this channel.
    await join('other', bob);
    await expect(open(bob, 'other', 'sfu', upstream.connectionId)).rejects.toMatchObject({
      code: 'ValidationFailed',
    });
    await rt.edge({ kind: 'connection.close', client: alice, channelId: 'down', connectionId: upstream.connectionId });
    await expect(open(bob, 'down', 'sfu', upstream.connectionId)).rejects.toMatchObject({ code: 'ValidationFailed' });
  });

  it('a disabled server keeps its channel but gets no new one; at capacity too', async () => {
    await join('kept', alice);
    const kept = await open(alice, 'kept');
    const disabled = kept.mediaServerId!;
    const other = disabled === MS1 ? MS2 : MS1;
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: disabled, patch: { active: false } });
    try {
      expect((await open(alice, 'kept')).mediaServerId).toBe(disabled);
      for (const channelId of ['new-1', 'new-2']) {
        await join(channelId, alice);
        expect((await open(alice, channelId)).mediaServerId).toBe(other);
      }
      // At capacity (far below its load), the server still takes its channel's connections.
      await beat(mediaServer(other, { capacity: 1 }));
      await waitFor(async () => {
        const s = await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: other });
        return s.active;
      });
      expect((await open(alice, 'new-1')).mediaServerId).toBe(other);
      await join('new-3', alice);
      await expect(open(alice, 'new-3')).rejects.toMatchObject({ code: 'Unavailable' });
    } finally {
      await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: disabled, patch: { active: true } });
      await beat(mediaServer(other));
    }
  });

  it('a channel gives up its server when the channel deactivates, or when the server stops', async () => {
    await join('moving', alice);
    const first = (await open(alice, 'moving')).mediaServerId!;
    const other = first === MS1 ? MS2 : MS1;
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: first, patch: { active: false } });
    try {
      expect((await open(alice, 'moving')).mediaServerId).toBe(first);
      await rt.edge({ kind: 'client.leave', client: alice, channelId: 'moving' });
      await join('moving', alice);
      expect((await open(alice, 'moving')).mediaServerId).toBe(other);
    } finally {
      await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: first, patch: { active: true } });
    }
    // Its server announces a shutdown: the channel's next connection goes to the other one, and stays.
    await beat(mediaServer(other, { active: false }));
    expect((await open(alice, 'moving')).mediaServerId).toBe(first);
    await beat(mediaServer(other));
    await waitFor(async () => (await activeServers()).length === 2);
    expect((await open(alice, 'moving')).mediaServerId).toBe(first);
  });

  it('the client reports connected only for a connection on a heartbeat-only server; a janus one hears Conflict', async () => {
    const janus = randomUUID();
    await beat(mediaServer(janus, {}, 'janus'));
    await waitFor(async () => (await activeServers()).includes(janus));
    for (const id of [MS1, MS2])
      await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: id, patch: { active: false } });
    try {
      await join('janus-room', alice);
      const onJanus = await open(alice, 'janus-room');
      expect(onJanus.mediaServerId).toBe(janus);
      const ref = { client: alice, channelId: 'janus-room', connectionId: onJanus.connectionId };
      // Two connections of a channel on a janus server never share an id (the agent names them by it).
      await join('janus-room', bob);
      const sameId = { ...ref, client: bob, type: 'sfu' as const, tag: null, streams: {} };
      await expect(rt.edge({ kind: 'connection.open', ...sameId })).rejects.toMatchObject({ code: 'Conflict' });
      for (const state of ['initializing', 'connecting'] as const)
        await rt.edge({ kind: 'connection.state', ...ref, state });
      await expect(rt.edge({ kind: 'connection.state', ...ref, state: 'connected' })).rejects.toMatchObject({
        code: 'Conflict',
        message: expect.stringContaining('media server'),
      });
      const info = await rt.query(OPERATOR, 'connection.get', {
        ...alice,
        channelId: 'janus-room',
        connectionId: onJanus.connectionId,
      });
      expect(info.state).toBe('connecting');
      // Other reports are taken as before.
      await rt.edge({ kind: 'connection.state', ...ref, state: 'closing' });
      await rt.edge({ kind: 'connection.state', ...ref, state: 'closed' });
    } finally {
      for (const id of [MS1, MS2])
        await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: id, patch: { active: true } });
    }
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: janus, patch: { active: false } });
    await join('plain', alice);
    const plain = await open(alice, 'plain');
    expect([MS1, MS2]).toContain(plain.mediaServerId);
    const ref = { client: alice, channelId: 'plain', connectionId: plain.connectionId };
    for (const state of ['initializing', 'connecting', 'connected'] as const)
      await rt.edge({ kind: 'connection.state', ...ref, state });
  });
});
