/**
 * The counts of a media server (pending and active connections, its load for placement, the
 * applications it serves) follow every connection that closes, whatever closes it: a state change,
 * a leave, a kick at any level, an unregister (also of the clients of a gone gateway). Each close
 * moves them exactly once, in the same script that removes the connection: a repeated close
 * changes nothing, and a registry that stops right after that script leaves them right.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import type { Heartbeat } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import { LiveStore } from '../store/live-store.js';
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
  type TestClient,
} from '../testing/harness.testing.js';

const ORG = 'org-mc';
const TENANT = scopeOf(ORG);
const MS = randomUUID();
const GW = 'gw-mc';

interface Counts {
  pending: number;
  active: number;
  closed: number;
  failed: number;
  /** The media server's score in the placement load set. */
  load: number;
  /** Its connections of each application. */
  apps: Record<string, string>;
}

describe('runtime-registry media server counts of closed connections', () => {
  const ns = testNamespace('mcounts');
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let events: EventReader;
  let store: LiveStore;
  const alive = new Map<string, Heartbeat>();
  let beating: NodeJS.Timeout;

  const mediaServer: Heartbeat = {
    role: 'mediaserver',
    server: {
      id: MS,
      region: null,
      version: '1',
      addresses: ['udp://10.0.0.1:3478'],
      active: true,
      lastHeartbeat: new Date().toISOString(),
    },
  };

  async function counts(): Promise<Counts> {
    const s = await rt.query(OPERATOR, 'mediaserver.stats', { mediaServerId: MS });
    const [load, apps] = (await store.read([
      ['zscore', store.keys.mediaServerLoad(), MS],
      ['hgetall', store.keys.mediaServerApps(MS)],
    ])) as [string | null, Record<string, string>];
    return {
      pending: s.pendingConnections,
      active: s.activeConnections,
      closed: s.totalClosedConnections,
      failed: s.totalFailedConnections,
      load: Number(load ?? 0),
      apps,
    };
  }

  /** The counts of `before` once `n` connections of `a` placed on the media server are closed. */
  function afterClosing(before: Counts, n: number, a: string): Counts {
    return { ...before, closed: before.closed + n, apps: without(before.apps, a) };
  }

  function without(apps: Record<string, string>, a: string): Record<string, string> {
    const out = { ...apps };
    delete out[a];
    return out;
  }

  /**
   * Registers the clients (through `gatewayId`), joins them to the channels and opens in each
   * channel, per client: an sfu connection left pending, an mcu connection taken to connected and
   * a peer connection (no media server). Answers how many connections it placed.
   */
  async function populate(clients: TestClient[], channels: string[], gatewayId = GW): Promise<number> {
    let placed = 0;
    for (const c of clients) {
      await rt.edge(registerReport(c, ORG, gatewayId));
      for (const ch of channels) {
        await rt.edge({ kind: 'client.join', client: c, channelId: ch, claim: claim(ch) });
        const cn = `${c.clientId}-${ch}`;
        const opened = [
          await rt.edge({
            kind: 'connection.open',
            client: c,
            channelId: ch,
            connectionId: `${cn}-sfu`,
            type: 'sfu',
            tag: null,
            streams: { audio: { direction: 'sendrecv' } },
          }),
          await rt.edge({
            kind: 'connection.open',
            client: c,
            channelId: ch,
            connectionId: `${cn}-mcu`,
            type: 'mcu',
            tag: null,
            streams: { audio: { direction: 'sendrecv' } },
          }),
        ];
        expect(opened.map((o) => o.mediaServerId)).toEqual([MS, MS]);
        for (const state of ['initializing', 'connecting', 'connected'] as const)
          await rt.edge({ kind: 'connection.state', client: c, channelId: ch, connectionId: `${cn}-mcu`, state });
        expect(
          (
            await rt.edge({
              kind: 'connection.open',
              client: c,
              channelId: ch,
              connectionId: `${cn}-peer`,
              type: 'peer',
              tag: null,
              streams: {},
            })
          ).mediaServerId,
        ).toBeNull();
        placed += 2;
      }
    }
    return placed;
  }

  /** Populates, checks that the counts went up by exactly those connections, and answers the counts before. */
  async function opened(
    a: string,
    clients: TestClient[],
    channels: string[],
    gatewayId = GW,
  ): Promise<{ before: Counts; placed: number }> {
    const before = await counts();
    const placed = await populate(clients, channels, gatewayId);
    expect(await counts()).toEqual({
      ...before,
      pending: before.pending + placed / 2,
      active: before.active + placed / 2,
      load: before.load + placed,
      apps: { ...before.apps, [a]: String(placed) },
    });
    return { before, placed };
  }

  const clientOf = (a: string, u: string, d: string, c: string): TestClient => ({
    applicationId: a,
    userId: u,
    deviceId: d,
    clientId: c,
  });

  beforeAll(async () => {
    registry = await startRegistry(
      registryEnv(ns, {
        SERVER_HEARTBEAT_TIMEOUT_SECONDS: '1',
        SERVER_RETENTION_SECONDS: '600',
        CLIENT_DROP_GRACE_SECONDS: '0',
        REGISTRY_SWEEP_INTERVAL_MS: '100',
      }),
    );
    store = registry.app.get(LiveStore);
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    events = await EventReader.open(nc, ns);
    alive.set(MS, mediaServer);
    await rt.heartbeat(mediaServer);
    beating = setInterval(() => {
      for (const hb of alive.values()) void rt.heartbeat(hb).catch(() => undefined);
    }, 200);
    // The gateway of the clients of most tests stays alive: the housekeeping leaves them be.
    alive.set(GW, {
      role: 'gateway',
      server: {
        id: GW,
        region: null,
        version: '1',
        addresses: [],
        active: true,
        lastHeartbeat: new Date().toISOString(),
      },
    });
    await waitFor(
      async () =>
        (await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: MS }).catch(() => null))?.active === true,
      { description: 'the media server to be active' },
    );
  });

  afterAll(async () => {
    clearInterval(beating);
    await events?.manager.streams.delete(events.stream).catch(() => undefined);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('a client leaving a channel frees its connections on the media server; leaving again changes nothing', async () => {
    const a = 'app-leave';
    const c = clientOf(a, 'u', 'd', 'c');
    const { before, placed } = await opened(a, [c], ['room']);
    await rt.edge({ kind: 'client.leave', client: c, channelId: 'room' });
    const after = await counts();
    expect(after).toEqual(afterClosing(before, placed, a));
    await rt.edge({ kind: 'client.leave', client: c, channelId: 'room' });
    expect(await counts()).toEqual(after);
  });

  it('kicks of a client, a device, a user, every member and a connection free their connections once; kicking again changes nothing', async () => {
    const a = 'app-kick';
    const c1 = clientOf(a, 'u1', 'd1', 'c1');
    const c2 = clientOf(a, 'u1', 'd1', 'c2');
    const c3 = clientOf(a, 'u1', 'd2', 'c3');
    const c4 = clientOf(a, 'u2', 'd1', 'c4');
    const c5 = clientOf(a, 'u3', 'd1', 'c5');
    const { before, placed } = await opened(a, [c1, c2, c3, c4, c5], ['room']);
    const perClient = placed / 5;
    const kicks = [
      {
        level: 'connection' as const,
        applicationId: a,
        channelId: 'room',
        userId: 'u3',
        deviceId: 'd1',
        clientId: 'c5',
        connectionId: 'c5-room-mcu',
      },
      {
        level: 'channel.client' as const,
        applicationId: a,
        channelId: 'room',
        userId: 'u1',
        deviceId: 'd1',
        clientId: 'c1',
      },
      { level: 'channel.device' as const, applicationId: a, channelId: 'room', userId: 'u1', deviceId: 'd1' },
      { level: 'channel.user' as const, applicationId: a, channelId: 'room', userId: 'u1' },
      { level: 'channel' as const, applicationId: a, channelId: 'room' },
    ];
    // What each kick closes on the media server: one mcu connection (connected); then c1, c2, c3,
    // and last c4 with what is left of c5 (its sfu connection).
    const closing = [1, perClient, perClient, perClient, perClient + 1];
    const closedMcu = [1, 1, 1, 1, 1];
    let expected = { ...(await counts()) };
    let left = placed;
    for (const [i, target] of kicks.entries()) {
      await rt.command(TENANT, { kind: 'kick', origin: 'api', target });
      left -= closing[i]!;
      const active = closedMcu[i]!;
      const pending = closing[i]! - active;
      expected = {
        ...expected,
        pending: expected.pending - pending,
        active: expected.active - active,
        closed: expected.closed + closing[i]!,
        load: expected.load - closing[i]!,
        apps: left > 0 ? { ...expected.apps, [a]: String(left) } : without(expected.apps, a),
      };
      expect(await counts()).toEqual(expected);
      await expect(rt.command(TENANT, { kind: 'kick', origin: 'api', target })).rejects.toMatchObject({
        code: 'NotFound',
      });
      expect(await counts()).toEqual(expected);
    }
    expect(expected).toEqual(afterClosing(before, placed, a));
  });

  it('an unregister frees the connections of every channel of the client; unregistering again changes nothing', async () => {
    const a = 'app-unregister';
    const c = clientOf(a, 'u', 'd', 'c');
    const { before, placed } = await opened(a, [c], ['one', 'two']);
    await rt.edge({ kind: 'client.unregister', client: c, reason: 'left', gatewayId: GW });
    const after = await counts();
    expect(after).toEqual(afterClosing(before, placed, a));
    await rt.edge({ kind: 'client.unregister', client: c, reason: 'left', gatewayId: GW });
    expect(await counts()).toEqual(after);
  });

  it('a registration in another session frees the connections of the registration it replaces', async () => {
    const a = 'app-replaced';
    const c = clientOf(a, 'u', 'd', 'c');
    const { before, placed } = await opened(a, [c], ['one', 'two']);
    // The same registration again, now naming its session: nothing is replaced.
    await rt.edge({ ...registerReport(c, ORG, GW), sessionId: 's-1' });
    expect((await counts()).load).toBe(before.load + placed);
    await rt.edge({ ...registerReport(c, ORG, `${GW}-next`), sessionId: 's-2' });
    expect(await counts()).toEqual(afterClosing(before, placed, a));
  });

  it('the clients of a gone gateway, unregistered by the housekeeping, free their connections', async () => {
    const a = 'app-gone-gateway';
    const gone = `gw-gone-${randomUUID()}`;
    // Alive while its clients connect, then it stops heartbeating.
    alive.set(gone, {
      role: 'gateway',
      server: {
        id: gone,
        region: null,
        version: '1',
        addresses: [],
        active: true,
        lastHeartbeat: new Date().toISOString(),
      },
    });
    await rt.heartbeat(alive.get(gone)!);
    const clients = [clientOf(a, 'u', 'd', 'c1'), clientOf(a, 'u', 'd', 'c2')];
    const { before, placed } = await opened(a, clients, ['room'], gone);
    alive.delete(gone);
    await waitFor(async () => (await store.appOwner(a)).inUse === false, {
      timeoutMs: 15000,
      description: 'the clients of the gone gateway to be dropped',
    });
    expect(await counts()).toEqual(afterClosing(before, placed, a));
  });

  describe('the close and its counts are one script: a registry that stops right after it leaves the counts right', () => {
    it('a leave (rtRemoveMembers)', async () => {
      const a = 'app-crash-leave';
      const c = clientOf(a, 'u', 'd', 'c');
      const { before, placed } = await opened(a, [c], ['room']);
      expect((await store.call(store.removeMembersCall(a, 'room', 'client', c))).lefts).toHaveLength(1);
      expect(await counts()).toEqual(afterClosing(before, placed, a));
    });

    it('a kick of every member (rtRemoveMembers)', async () => {
      const a = 'app-crash-kick';
      const clients = [clientOf(a, 'u1', 'd', 'c'), clientOf(a, 'u2', 'd', 'c')];
      const { before, placed } = await opened(a, clients, ['room']);
      expect((await store.call(store.removeMembersCall(a, 'room', 'channel', {}))).lefts).toHaveLength(2);
      expect(await counts()).toEqual(afterClosing(before, placed, a));
    });

    it('an unregister (rtUnregister)', async () => {
      const a = 'app-crash-unregister';
      const c = clientOf(a, 'u', 'd', 'c');
      const { before, placed } = await opened(a, [c], ['one', 'two']);
      expect((await store.call(store.unregisterCall(a, c, 60000)))?.lefts).toHaveLength(2);
      expect(await counts()).toEqual(afterClosing(before, placed, a));
      expect(await store.call(store.unregisterCall(a, c, 60000))).toBeNull();
      expect(await counts()).toEqual(afterClosing(before, placed, a));
    });
  });
});
