/**
 * The edge converges after pushes were lost: the real runtime-registry, gateways in this process, one
 * of them reaching NATS through a TCP proxy the test cuts. What each case covers is listed in the
 * gateway's README (Tests).
 */
import { RequestError, NoRespondersError, connect, type NatsConnection } from '@nats-io/transport-node';
import {
  pushSubject,
  RuntimeSubjects,
  SYNC_CLOSE_CODES,
  type CallerScope,
  type ChannelClaim,
  type ClientRef,
  type EdgeReport,
  type ResolvedApplication,
  type RuntimeCommand,
  type RuntimeQuery,
  type PushBatch,
  type ServerPush,
} from '@switchboard/contracts';
import {
  flushRedisPrefix,
  freePort,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
} from '@switchboard/testing';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { metric, startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { nestRequest, registerToken, spawnTestRegistry } from '../testing/registry.testing.js';
import { identity, TestSyncClient, type Identity } from '../testing/sync-client.testing.js';
import { SessionReconciler } from './session-reconciler.js';
import { NO_SETTINGS } from './sync-step.js';

const APP = 'app-reconcile';
const ORG = 'org-reconcile';
const SECRET = 'reconcile-secret';
const SCOPE: CallerScope = { organizationId: ORG, operator: false, principal: 'reconcile-test' };
const CLAIMS: ChannelClaim[] = [{ id: 'room-a' }, { id: 'room-b' }, { id: 'room-c' }];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const token = (id: Identity) => registerToken(id, { applicationId: APP, secret: SECRET, channels: CLAIMS });

/**
 * A TCP proxy in front of NATS: `cut` drops its connections and refuses new ones until `restore` (a
 * network blip); `hold` keeps what NATS sends (the answers to the gateway's requests among it) until
 * `release`, while what the gateway sends goes on.
 */
interface NatsProxy {
  url: string;
  cut(): void;
  restore(): void;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function natsProxy(target: string): Promise<NatsProxy> {
  const upstreamUrl = new URL(target);
  const sockets = new Set<net.Socket>();
  let open = true;
  let held: Array<() => void> | null = null;
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(upstreamUrl.port), upstreamUrl.hostname);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (held) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  return {
    url: `nats://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    hold() {
      held ??= [];
    },
    release() {
      const writes = held ?? [];
      held = null;
      for (const write of writes) write();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Pushes in a stable order (their type and target; not a settings push's version, a number the registry picks). */
const sortKey = (p: ServerPush) =>
  JSON.stringify([
    p.type,
    'channelId' in p ? p.channelId : null,
    'connectionId' in p ? (p.connectionId ?? null) : null,
  ]);
const byText = (a: ServerPush, b: ServerPush) => sortKey(a).localeCompare(sortKey(b));

describe('reconciling the edge with runtime-registry after lost pushes', () => {
  const servers = testServers();
  const ns = testNamespace('gw_reconcile');
  let nc: NatsConnection;
  let registry: SpawnedService;
  let proxy: NatsProxy;
  /** Reaches NATS through the proxy; reconciles only when its NATS connection comes back. */
  let cutOff: TestGateway;
  /** Like cutOff, through a proxy of its own: it holds the 501 clients of the request count test only. */
  let crowdedProxy: NatsProxy;
  let crowded: TestGateway;
  /**
   * The `gateway.sessions` reads sent on the edge subject (seen by a plain subscription next to the registry's queue
   * group): the clients of each.
   */
  const sessionReads: ClientRef[][] = [];
  /** The `client.leave` and `connection.close` reports sent on the edge subject (alone or in a batch). */
  const removalReports: Array<Extract<EdgeReport, { kind: 'client.leave' | 'connection.close' }>> = [];
  /** Checks its clients every 200 ms. */
  let periodic: TestGateway;
  /** Checks its clients every 10 ms (a client keeps changing its state meanwhile). */
  let eager: TestGateway;
  /**
   * Through a proxy that can hold the registry's answers back; checks its clients when the test asks
   * (no pass may be reading when answers are held: it could not end until they are released).
   */
  let heldProxy: NatsProxy;
  let held: TestGateway;
  const clients: TestSyncClient[] = [];

  const rpc = (subject: string, data: unknown) => nestRequest(nc, ns, subject, data);

  /** An interface A read of the registry, as the gateway's HTTP side sends it. */
  const query = (q: RuntimeQuery) => rpc(RuntimeSubjects.query, { scope: SCOPE, query: q });
  /** The channels the registry lists for a client. */
  const channelsOf = async (ref: ClientRef) =>
    ((await query({ kind: 'client.channels', ...ref })) as Array<{ id: string }>).map((c) => c.id).sort();
  /** The connections the registry lists for a client in a channel (none when it is not in the channel). */
  const connectionsOf = async (ref: ClientRef, channelId: string) => {
    try {
      return ((await query({ kind: 'channel.client.connections', ...ref, channelId })) as Array<{ id: string }>)
        .map((c) => c.id)
        .sort();
    } catch (e) {
      if (/NotFound/.test((e as Error).message)) return [];
      throw e;
    }
  };
  /** An interface A command (kick, update) to the registry, as the gateway's HTTP side sends it. */
  const command = (c: RuntimeCommand) => rpc(RuntimeSubjects.command, { scope: SCOPE, command: c });
  /** A report straight to the registry: it changes the live model and pushes nothing to the gateway. */
  const edge = (report: EdgeReport) => rpc(RuntimeSubjects.edge, { report });
  /** Pushes to a gateway as the registry does (a PushBatch on its push subject), in order. */
  const pushTo = async (gw: TestGateway, ref: ClientRef, ...pushes: ServerPush[]) => {
    const batch: PushBatch = { deliveries: pushes.map((push) => ({ client: ref, push })) };
    nc.publish(pushSubject(ns, gw.gatewayId), encoder.encode(JSON.stringify(batch)));
    await nc.flush();
  };
  /** Counts the gateway's reconcile passes from now on: `after(n)` resolves once n more have run. */
  async function passCounter(gw: TestGateway, labels: Record<string, string> = {}) {
    const count = () => metric(gw, 'sync_reconcile_passes_total', labels);
    const before = await count();
    return {
      after: (n: number) =>
        waitFor(async () => (await count()) >= before + n, { timeoutMs: 15000, description: `${n} reconcile passes` }),
    };
  }
  /** Resolves after `n` more reconcile passes of the gateway. */
  const passes = async (gw: TestGateway, n: number) => (await passCounter(gw)).after(n);
  /** Asks the gateway for a pass (one starts at once when none runs) and resolves once one more ended. */
  const pass = async (gw: TestGateway) => {
    const counter = await passCounter(gw);
    gw.app.get(SessionReconciler).request('periodic');
    await counter.after(1);
  };

  /** What the registry holds for a client (gateway.sessions, as the gateways read it); null: not registered. */
  const registration = async (ref: ClientRef) =>
    (
      (await edge({ kind: 'gateway.sessions', clients: [ref] } as unknown as EdgeReport)) as {
        clients: Array<{ gatewayId: string | null; sessionId: string | null } | null>;
      }
    ).clients[0] ?? null;
  /**
   * Registers a client through a gateway's id straight on the registry, as the gateway does (a register whose answer it
   * may not get).
   */
  const registerDirectly = (ref: ClientRef, gatewayId: string, sessionId: string) =>
    edge({
      kind: 'client.register',
      client: {
        ...ref,
        userAlias: 'Ann',
        deviceAlias: null,
        tag: 'first',
        roles: ['participant'],
        protocol: 'websocket',
      },
      organizationId: ORG,
      gatewayId,
      claims: CLAIMS,
      sessionId,
    });

  /**
   * Resolves once the registry sent its answer to a request on the edge subject that `match` picks
   * (this connection sees the request, then the answer on the requester's inbox, in that order).
   */
  async function answerTo(
    match: (report: { kind?: string; clients?: ClientRef[] }) => boolean,
  ): Promise<{ answered: Promise<void>; stop(): void }> {
    const replies = new Set<string>();
    let resolve!: () => void;
    const answered = new Promise<void>((r) => (resolve = r));
    const requests = nc.subscribe(`${ns}.${RuntimeSubjects.edge}`, {
      callback: (err, msg) => {
        if (err || !msg.reply) return;
        const report = (
          JSON.parse(decoder.decode(msg.data)) as { data?: { report?: { kind?: string; clients?: ClientRef[] } } }
        ).data?.report;
        if (report && match(report)) replies.add(msg.reply);
      },
    });
    const inboxes = nc.subscribe('_INBOX.>', {
      callback: (err, msg) => {
        if (!err && replies.has(msg.subject)) resolve();
      },
    });
    await nc.flush();
    return {
      answered,
      stop: () => {
        requests.unsubscribe();
        inboxes.unsubscribe();
      },
    };
  }

  async function registered(gw: TestGateway, id: Identity = identity()) {
    const client = await TestSyncClient.open(gw.syncUrl);
    clients.push(client);
    await client.ok('register', { token: token(id), userAlias: 'Ann', tag: 'first' });
    const ref: ClientRef = { applicationId: APP, ...id };
    return { client, id, ref };
  }

  /** Resolves once the NATS server no longer holds the gateway's push subscription (its connection is gone). */
  async function unsubscribed(gw: TestGateway): Promise<void> {
    await waitFor(
      async () => {
        try {
          await nc.request(pushSubject(ns, gw.gatewayId), encoder.encode(JSON.stringify({ deliveries: [] })), {
            timeout: 200,
          });
          return false;
        } catch (e) {
          return e instanceof NoRespondersError || (e instanceof RequestError && e.isNoResponders());
        }
      },
      { timeoutMs: 10000, description: 'the gateway to be cut off from NATS' },
    );
  }

  beforeAll(async () => {
    nc = await connect({ servers: servers.natsUrl });
    const application: ResolvedApplication = {
      applicationId: APP,
      applicationConfigId: 'cfg-reconcile',
      organizationId: ORG,
      sharedSecret: SECRET,
      disabled: false,
    };
    nc.subscribe(`${ns}.${RuntimeSubjects.resolveApplication}`, {
      callback: (err, msg) => {
        if (err) return;
        const { id, data } = JSON.parse(decoder.decode(msg.data)) as { id: string; data: { applicationId: string } };
        const reply =
          data.applicationId === APP
            ? { id, response: application, isDisposed: true }
            : { id, err: { code: 'NotFound', message: 'unknown application' }, isDisposed: true };
        msg.respond(encoder.encode(JSON.stringify(reply)));
      },
    });
    await nc.flush();
    nc.subscribe(`${ns}.${RuntimeSubjects.edge}`, {
      callback: (err, msg) => {
        if (err) return;
        const report = (
          JSON.parse(decoder.decode(msg.data)) as {
            data?: { report?: { kind?: string; clients?: ClientRef[]; sequences?: EdgeReport[][] } };
          }
        ).data?.report;
        if (report?.kind === 'gateway.sessions' && Array.isArray(report.clients)) sessionReads.push(report.clients);
        const reports =
          report?.kind === 'batch' ? (report.sequences ?? []).flat() : report ? [report as EdgeReport] : [];
        for (const r of reports) if (r.kind === 'client.leave' || r.kind === 'connection.close') removalReports.push(r);
      },
    });
    await nc.flush();
    proxy = await natsProxy(servers.natsUrl);
    crowdedProxy = await natsProxy(servers.natsUrl);
    heldProxy = await natsProxy(servers.natsUrl);
    [registry, cutOff, periodic, eager, crowded, held] = await Promise.all([
      spawnTestRegistry(servers.natsUrl, servers.redisUrl, ns),
      startTestGateway(proxy.url, ns, { SYNC_RECONCILE_INTERVAL_MS: '0', SYNC_GRACE_PERIOD_MS: '600000' }),
      startTestGateway(servers.natsUrl, ns, { SYNC_RECONCILE_INTERVAL_MS: '200', SYNC_GRACE_PERIOD_MS: '600000' }),
      startTestGateway(servers.natsUrl, ns, { SYNC_RECONCILE_INTERVAL_MS: '10', SYNC_GRACE_PERIOD_MS: '600000' }),
      startTestGateway(crowdedProxy.url, ns, { SYNC_RECONCILE_INTERVAL_MS: '0', SYNC_GRACE_PERIOD_MS: '600000' }),
      // Answers held back for a moment must not time out.
      startTestGateway(heldProxy.url, ns, {
        SYNC_RECONCILE_INTERVAL_MS: '0',
        SYNC_GRACE_PERIOD_MS: '600000',
        NATS_REQUEST_TIMEOUT_MS: '30000',
      }),
    ]);
  }, 60000);

  afterEach(() => {
    proxy.restore();
    crowdedProxy.restore();
    heldProxy.release();
    for (const c of clients.splice(0)) c.terminate();
  });

  afterAll(async () => {
    await Promise.all([cutOff?.close(), periodic?.close(), eager?.close(), crowded?.close(), held?.close()]);
    await registry?.stop();
    await proxy?.close();
    await crowdedProxy?.close();
    await heldProxy?.close();
    await nc?.close();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
  });

  it('after a NATS blip, gives a client the kicks, closed connections, settings, states and client update pushed meanwhile, and applies them at the edge', async () => {
    const { client, ref } = await registered(cutOff);
    for (const channelId of ['room-a', 'room-b', 'room-c']) await client.ok('join', { channelId });
    const open = (channelId: string, connectionId: string, audioMuted: boolean) =>
      client.ok('connection.open', {
        channelId,
        connectionId,
        type: 'peer',
        streams: { audio: { direction: 'sendrecv', muted: audioMuted } },
      });
    await open('room-a', 'cn-a1', true);
    await open('room-a', 'cn-a2', false);
    await open('room-b', 'cn-b', false);

    proxy.cut();
    await unsubscribed(cutOff);
    // Each of these pushes to the gateway, which is not there to get it.
    await command({ kind: 'kick', origin: 'api', target: { level: 'channel.client', ...ref, channelId: 'room-b' } });
    await command({ kind: 'kick', origin: 'api', target: { level: 'channel.client', ...ref, channelId: 'room-c' } });
    await command({
      kind: 'kick',
      origin: 'api',
      target: { level: 'connection', ...ref, channelId: 'room-a', connectionId: 'cn-a2' },
    });
    await command({
      kind: 'update',
      origin: 'api',
      target: {
        level: 'connection',
        ...ref,
        channelId: 'room-a',
        connectionId: 'cn-a1',
        patch: { audioUnmuteDisabled: true, recording: true, recordingTag: 'rec-1' },
      },
    });
    await command({
      kind: 'update',
      origin: 'api',
      target: { level: 'client', ...ref, patch: { tag: 'second', roles: ['moderator'] } },
    });
    // The state moved at the registry (as the media moves it) while its push was lost.
    await rpc(RuntimeSubjects.edge, {
      report: {
        kind: 'connection.state',
        client: ref,
        channelId: 'room-a',
        connectionId: 'cn-a1',
        state: 'initializing',
      },
    });
    expect(client.pushes).toEqual([]);

    proxy.restore();
    const expected: ServerPush[] = [
      { type: 'kicked', channelId: 'room-a', connectionId: 'cn-a2' },
      {
        type: 'settings',
        channelId: 'room-a',
        connectionId: 'cn-a1',
        settings: {
          recording: true,
          recordingTag: 'rec-1',
          audioMuted: false,
          videoMuted: false,
          audioUnmuteDisabled: true,
          videoUnmuteDisabled: false,
        },
        // The application's settings sequence at the read: ordered with the pushes.
        version: expect.any(Number),
      },
      { type: 'kicked', channelId: 'room-b', connectionId: null },
      { type: 'kicked', channelId: 'room-c', connectionId: null },
      { type: 'client.updated', userAlias: 'Ann', deviceAlias: null, tag: 'second', roles: ['moderator'] },
      { type: 'connection.state', channelId: 'room-a', connectionId: 'cn-a1', state: 'initializing' },
    ];
    await waitFor(() => client.pushes.length >= expected.length, {
      timeoutMs: 15000,
      description: 'the reconciled pushes',
    });
    expect([...client.pushes].sort(byText)).toEqual([...expected].sort(byText));
    const { version } = client.pushes.find((p) => p.type === 'settings') as Extract<ServerPush, { type: 'settings' }>;

    // A settings push of the read's version or older arriving late (the one lost, delayed on the way)
    // is stale: it does not roll the reconciled settings back. The newer push after it is applied.
    const newer: ServerPush = {
      type: 'settings',
      channelId: 'room-a',
      connectionId: 'cn-a1',
      settings: { ...NO_SETTINGS, audioUnmuteDisabled: true, recordingTag: 'newer' },
      version: version! + 1,
    };
    await pushTo(
      cutOff,
      ref,
      { type: 'settings', channelId: 'room-a', connectionId: 'cn-a1', settings: NO_SETTINGS, version: version! },
      newer,
    );
    await waitFor(() => client.pushes.length > expected.length, {
      timeoutMs: 5000,
      description: 'the newer settings push',
    });
    expect(client.pushes.slice(expected.length)).toEqual([newer]);

    // The edge holds the registry's state now: what it refuses, it refuses before reporting.
    expect(await client.request('connection.update', { connectionId: 'cn-a1', localAudioMuted: false })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'UnmuteDisabled' }) }),
    );
    expect(await client.request('connection.state', { connectionId: 'cn-a2', state: 'initializing' })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'UnknownConnection' }) }),
    );
    expect(await client.request('connection.open', { channelId: 'room-b', type: 'peer', streams: {} })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'NotJoined' }) }),
    );
    // Kicked out, the client may join again (the edge no longer believes it is in the channel).
    await client.ok('join', { channelId: 'room-c' });
    // The edge took the reconciled state: the next step from it is accepted.
    await client.ok('connection.state', { connectionId: 'cn-a1', state: 'connecting' });
  });

  it('after a NATS blip, ends the session of a client the registry unregistered meanwhile (4010)', async () => {
    const { client, ref } = await registered(cutOff);
    await client.ok('join', { channelId: 'room-a' });
    const other = await registered(cutOff);

    proxy.cut();
    await unsubscribed(cutOff);
    // As the registry does for the clients of a gateway it believes gone.
    await edge({ kind: 'client.unregister', client: ref, reason: 'dropped', gatewayId: cutOff.gatewayId });
    proxy.restore();

    await waitFor(() => client.pushes.length > 0, { timeoutMs: 15000, description: 'the unregistered push' });
    expect(client.pushes).toEqual([{ type: 'unregistered', reason: expect.any(String) }]);
    expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.unregistered);
    // The other client, still registered, keeps its session and gets nothing.
    await other.client.ok('join', { channelId: 'room-a' });
    expect(other.client.pushes).toEqual([]);
  });

  it('after a NATS blip, gives a client the claim change pushed meanwhile, and the edge enforces it', async () => {
    const { client, ref } = await registered(cutOff);
    await client.ok('join', { channelId: 'room-a' });

    proxy.cut();
    await unsubscribed(cutOff);
    const claim: ChannelClaim = { id: 'room-a', disablePeer: true, disableSendMessage: true };
    await command({
      kind: 'update',
      origin: 'api',
      target: { level: 'channel.client', ...ref, channelId: 'room-a', patch: { claim } },
    });
    expect(client.pushes).toEqual([]);
    proxy.restore();

    await waitFor(() => client.pushes.length > 0, { timeoutMs: 15000, description: 'the reconciled claim' });
    expect(client.pushes).toEqual([{ type: 'claim.updated', channelId: 'room-a', claim }]);
    expect(await client.request('connection.open', { channelId: 'room-a', type: 'peer', streams: {} })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'Forbidden' }) }),
    );
    expect(await client.request('message', { channelId: 'room-a', message: 'hi' })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'Forbidden' }) }),
    );
    // Applied, the claim is no longer a difference: the next pass pushes nothing more.
    const reconnects = await passCounter(cutOff, { trigger: 'reconnect' });
    proxy.cut();
    await unsubscribed(cutOff);
    proxy.restore();
    await reconnects.after(1);
    expect(client.pushes).toHaveLength(1);
  });

  it('after a NATS blip, ends the session of a client whose registration another gateway or another session took meanwhile, and only that one', async () => {
    const moved = await registered(cutOff);
    await moved.client.ok('join', { channelId: 'room-a' });
    const replaced = await registered(cutOff);
    await replaced.client.ok('join', { channelId: 'room-a' });
    const stays = await registered(cutOff);

    proxy.cut();
    await unsubscribed(cutOff);
    // The client registers again through another gateway: the registry pushes `unregistered` to this one, lost.
    const elsewhere = await TestSyncClient.open(periodic.syncUrl);
    clients.push(elsewhere);
    await elsewhere.ok('register', { token: token(moved.id), userAlias: 'Ann', tag: 'first' });
    // A registration of another session through this gateway's id (the registry pushes nothing then).
    await edge({
      kind: 'client.register',
      client: {
        ...replaced.ref,
        userAlias: 'Ann',
        deviceAlias: null,
        tag: 'first',
        roles: ['participant'],
        protocol: 'websocket',
      },
      organizationId: ORG,
      gatewayId: cutOff.gatewayId,
      claims: CLAIMS,
      sessionId: randomUUID(),
    });
    proxy.restore();

    for (const { client } of [moved, replaced]) {
      await waitFor(() => client.pushes.length > 0, { timeoutMs: 15000, description: 'the unregistered push' });
      expect(client.pushes).toEqual([{ type: 'unregistered', reason: expect.any(String) }]);
      expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.unregistered);
    }
    expect(stays.client.pushes).toEqual([]);
    await stays.client.ok('join', { channelId: 'room-a' });
    // The ended session reported nothing: the registration elsewhere lives on, checked by its own gateway.
    await elsewhere.ok('join', { channelId: 'room-a' });
    await passes(periodic, 3);
    expect(elsewhere.pushes).toEqual([]);
    await elsewhere.ok('leave', { channelId: 'room-a' });
  });

  it('does not roll back a settings push newer than what its passes read', async () => {
    const { client, ref } = await registered(periodic);
    await client.ok('join', { channelId: 'room-a' });
    await client.ok('connection.open', {
      channelId: 'room-a',
      connectionId: 'cn-v',
      type: 'peer',
      streams: { audio: { direction: 'sendrecv', muted: true } },
    });
    // A push of a write the passes' reads do not see (a version above the application's settings sequence).
    const newer: ServerPush = {
      type: 'settings',
      channelId: 'room-a',
      connectionId: 'cn-v',
      settings: { ...NO_SETTINGS, audioUnmuteDisabled: true },
      version: 2 ** 40,
    };
    await pushTo(periodic, ref, newer);
    await waitFor(() => client.pushes.length > 0, { timeoutMs: 5000, description: 'the settings push' });
    await passes(periodic, 3);
    expect(client.pushes).toEqual([newer]);
    expect(await client.request('connection.update', { connectionId: 'cn-v', localAudioMuted: false })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'UnmuteDisabled' }) }),
    );
    await client.ok('connection.close', { connectionId: 'cn-v' });
  });

  it('checks its clients periodically: changes the registry made without a push reach them', async () => {
    const { client, ref } = await registered(periodic);
    await client.ok('join', { channelId: 'room-a' });
    await client.ok('join', { channelId: 'room-b' });
    await client.openPeerAudio('room-a', 'cn-1');
    await client.openPeerAudio('room-a', 'cn-2');

    await edge({ kind: 'connection.close', client: ref, channelId: 'room-a', connectionId: 'cn-1' });
    await edge({ kind: 'client.leave', client: ref, channelId: 'room-b' });

    await waitFor(() => client.pushes.length >= 2, { timeoutMs: 10000, description: 'the reconciled pushes' });
    const expected: ServerPush[] = [
      { type: 'kicked', channelId: 'room-a', connectionId: 'cn-1' },
      { type: 'kicked', channelId: 'room-b', connectionId: null },
    ];
    expect([...client.pushes].sort(byText)).toEqual(expected.sort(byText));
    expect(await client.request('connection.close', { connectionId: 'cn-1' })).toEqual(
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'UnknownConnection' }) }),
    );
    await client.ok('connection.close', { connectionId: 'cn-2' });
  });

  it('pushes nothing to a client whose state did not change, nor to one changing it while passes run', async () => {
    const quiet = await registered(periodic);
    await quiet.client.ok('join', { channelId: 'room-a' });
    await quiet.client.ok('connection.open', {
      channelId: 'room-a',
      connectionId: 'cn-q',
      type: 'peer',
      streams: { audio: { direction: 'sendrecv', muted: true } },
    });
    const passes = await metric(periodic, 'sync_reconcile_passes_total');
    await waitFor(async () => (await metric(periodic, 'sync_reconcile_passes_total')) >= passes + 3, {
      timeoutMs: 10000,
      description: 'three reconcile passes',
    });
    expect(quiet.client.pushes).toEqual([]);

    // Joins, opens, mutes, closes and leaves while the eager gateway checks its clients every 10 ms.
    const busy = await registered(eager);
    for (let i = 0; i < 15; i++) {
      await busy.client.ok('join', { channelId: 'room-b' });
      await busy.client.openPeerAudio('room-b', `cn-${i}`);
      await busy.client.ok('connection.update', { connectionId: `cn-${i}`, localAudioMuted: true });
      await busy.client.ok('client.update', { tag: `tag-${i}` });
      await busy.client.ok('connection.close', { connectionId: `cn-${i}` });
      await busy.client.ok('leave', { channelId: 'room-b' });
    }
    await busy.client.ok('join', { channelId: 'room-b' });
    await busy.client.openPeerAudio('room-b', 'cn-last');
    const after = await metric(eager, 'sync_reconcile_passes_total');
    await waitFor(async () => (await metric(eager, 'sync_reconcile_passes_total')) >= after + 3, {
      timeoutMs: 10000,
      description: 'three more reconcile passes',
    });
    expect(busy.client.pushes).toEqual([]);
    await busy.client.ok('connection.close', { connectionId: 'cn-last' });
  });

  /**
   * What the registry holds after requests whose answer the gateway did not get (a NATS request
   * timeout, a registry restart: the gateway undid them at the edge and answered the client an
   * error), reported here straight to the registry in one sequence (so no pass runs between them):
   * a join and an open in it, an open in a channel the client is in. The session knows none of them.
   */
  async function ghosts(
    ref: ClientRef,
    joined: string,
    inJoined: string,
    existing: string,
    inExisting: string,
  ): Promise<void> {
    const open = (channelId: string, connectionId: string): EdgeReport => ({
      kind: 'connection.open',
      client: ref,
      channelId,
      connectionId,
      type: 'peer',
      tag: null,
      streams: { audio: { direction: 'sendrecv' } },
    });
    const reports: EdgeReport[] = [
      { kind: 'client.join', client: ref, channelId: joined, claim: { id: joined } },
      open(joined, inJoined),
      open(existing, inExisting),
      { kind: 'connection.state', client: ref, channelId: existing, connectionId: inExisting, state: 'initializing' },
    ];
    const result = (await rpc(RuntimeSubjects.edge, { report: { kind: 'batch', sequences: [reports] } })) as {
      sequences: unknown[][];
    };
    expect(result.sequences[0]!.map((o) => Object.keys(o as object))).toEqual(reports.map(() => ['ok']));
  }

  it('leaves the channels and closes the connections the registry holds for a client and its session does not, and leaves the session as it is', async () => {
    const { client, ref } = await registered(periodic);
    await client.ok('join', { channelId: 'room-a' });
    await client.openPeerAudio('room-a', 'cn-own');
    const leaves = await metric(periodic, 'sync_reconcile_corrections_total', { report: 'leave' });
    const closes = await metric(periodic, 'sync_reconcile_corrections_total', { report: 'close' });

    // Applied (every report answered ok); a pass may remove them before the next line.
    await ghosts(ref, 'room-b', 'cn-ghost-b', 'room-a', 'cn-ghost-a');

    await waitFor(
      async () => (await channelsOf(ref)).length === 1 && (await connectionsOf(ref, 'room-a')).length === 1,
      {
        timeoutMs: 15000,
        description: 'the registry to hold only what the session has',
      },
    );
    expect(await channelsOf(ref)).toEqual(['room-a']);
    expect(await connectionsOf(ref, 'room-a')).toEqual(['cn-own']);
    expect(await connectionsOf(ref, 'room-b')).toEqual([]);
    // Counted once the gateway has the registry's answers (the registry may show the change a moment before).
    const counted = async () => [
      await metric(periodic, 'sync_reconcile_corrections_total', { report: 'leave' }),
      await metric(periodic, 'sync_reconcile_corrections_total', { report: 'close' }),
    ];
    await waitFor(async () => (await counted()).every((n, i) => n >= [leaves, closes][i]! + 1), {
      timeoutMs: 10000,
      description: 'the reports counted',
    });
    // Nothing changed at the edge: the client is told nothing, and its own channel and connection stay.
    expect(client.pushes).toEqual([]);
    await client.ok('connection.state', { connectionId: 'cn-own', state: 'initializing' });
    await client.ok('message', { channelId: 'room-a', message: 'still here' });
    // The client may join the channel and open the connection it was refused (the edge and the registry agree now).
    await client.ok('join', { channelId: 'room-b' });
    await client.openPeerAudio('room-a', 'cn-ghost-a');
    await passes(periodic, 3);
    expect(await channelsOf(ref)).toEqual(['room-a', 'room-b']);
    expect(await connectionsOf(ref, 'room-a')).toEqual(['cn-ghost-a', 'cn-own']);
    expect(client.pushes).toEqual([]);
    // One leave and one close (the connection in the channel left went with it), reported once.
    expect(await counted()).toEqual([leaves + 1, closes + 1]);
    await client.ok('connection.close', { connectionId: 'cn-own' });
    await client.ok('connection.close', { connectionId: 'cn-ghost-a' });
  });

  it('leaves alone a join and an open the registry applied while their answers are awaited', async () => {
    const { client, ref } = await registered(held);
    await client.ok('join', { channelId: 'room-a' });
    // The held gateway runs the passes the test asks for, and those its retries start: after one that
    // read every session (`ok`), none runs and none is due, so holding answers back holds no read.
    const quiet = () => passCounter(held, { outcome: 'ok' });

    // The registry applies the join; its answer is held back on the way to the gateway. The passes
    // meanwhile find the session busy: they read nothing (so they end while answers are held).
    heldProxy.hold();
    const join = client.request('join', { channelId: 'room-b' });
    await waitFor(async () => (await channelsOf(ref)).includes('room-b'), {
      timeoutMs: 10000,
      description: 'the join in the registry',
    });
    await pass(held);
    await pass(held);
    let settled = await quiet();
    heldProxy.release();
    expect(await join).toEqual(expect.objectContaining({ type: 'result' }));
    // The retry of the busy session reads it, now answered.
    await settled.after(1);

    // The same for an open.
    heldProxy.hold();
    const open = client.request('connection.open', {
      channelId: 'room-b',
      connectionId: 'cn-flight',
      type: 'peer',
      streams: { audio: { direction: 'sendrecv' } },
    });
    await waitFor(async () => (await connectionsOf(ref, 'room-b')).includes('cn-flight'), {
      timeoutMs: 10000,
      description: 'the open in the registry',
    });
    await pass(held);
    await pass(held);
    settled = await quiet();
    heldProxy.release();
    expect(await open).toEqual(expect.objectContaining({ type: 'result' }));
    await settled.after(1);
    expect(await channelsOf(ref)).toEqual(['room-a', 'room-b']);
    expect(await connectionsOf(ref, 'room-b')).toEqual(['cn-flight']);

    // The passes of this gateway do remove what the session does not have (made now), and only that.
    await ghosts(ref, 'room-c', 'cn-ghost-c', 'room-b', 'cn-ghost-b');
    await pass(held);
    expect(await channelsOf(ref)).toEqual(['room-a', 'room-b']);
    expect(await connectionsOf(ref, 'room-b')).toEqual(['cn-flight']);
    await pass(held);
    expect(await channelsOf(ref)).toEqual(['room-a', 'room-b']);
    expect(await connectionsOf(ref, 'room-b')).toEqual(['cn-flight']);
    expect(client.pushes).toEqual([]);
    await client.ok('connection.state', { connectionId: 'cn-flight', state: 'initializing' });
    await client.ok('connection.close', { connectionId: 'cn-flight' });
  });

  it('a leave or close a pass sends after the client registered again in another session leaves that registration as it is', async () => {
    const { client, ref } = await registered(held);
    await client.ok('join', { channelId: 'room-a' });
    // What the registry holds and the session does not: room-c (a connection in it), a connection in room-a.
    await ghosts(ref, 'room-c', 'cn-ghost-c', 'room-a', 'cn-ghost-a');
    const leaves = await metric(held, 'sync_reconcile_corrections_total', { report: 'leave' });
    const closes = await metric(held, 'sync_reconcile_corrections_total', { report: 'close' });

    // A pass reads the session; the registry's answer is held back on the way to the gateway.
    const read = await answerTo(
      (report) => report.kind === 'gateway.sessions' && (report.clients ?? []).some((c) => c.clientId === ref.clientId),
    );
    heldProxy.hold();
    const counter = await passCounter(held);
    held.app.get(SessionReconciler).request('periodic');
    await read.answered;
    read.stop();
    // Meanwhile the client registers again in another session (the registry pushes nothing for a
    // takeover through the same gateway) and is in room-c, with a connection in room-a, there.
    const sessionId = randomUUID();
    await registerDirectly(ref, held.gatewayId, sessionId);
    for (const channelId of ['room-a', 'room-c'])
      if (!(await channelsOf(ref)).includes(channelId))
        await edge({ kind: 'client.join', client: ref, channelId, claim: { id: channelId } });
    if (!(await connectionsOf(ref, 'room-a')).includes('cn-ghost-a')) {
      await edge({
        kind: 'connection.open',
        client: ref,
        channelId: 'room-a',
        connectionId: 'cn-ghost-a',
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
    }
    const newer = {
      channels: await channelsOf(ref),
      inA: await connectionsOf(ref, 'room-a'),
      inC: await connectionsOf(ref, 'room-c'),
    };
    expect(newer.channels).toEqual(expect.arrayContaining(['room-a', 'room-c']));
    expect(newer.inA).toContain('cn-ghost-a');
    expect(await registration(ref)).toEqual(expect.objectContaining({ gatewayId: held.gatewayId, sessionId }));

    // The pass gets the read from before: it reports the leave of room-c and the close in room-a (answered ok).
    heldProxy.release();
    await counter.after(1);
    const counted = async () => [
      await metric(held, 'sync_reconcile_corrections_total', { report: 'leave' }),
      await metric(held, 'sync_reconcile_corrections_total', { report: 'close' }),
    ];
    expect(await counted()).toEqual([leaves + 1, closes + 1]);
    // They named the old session: the newer registration keeps all it holds.
    expect({
      channels: await channelsOf(ref),
      inA: await connectionsOf(ref, 'room-a'),
      inC: await connectionsOf(ref, 'room-c'),
    }).toEqual(newer);
    expect(await registration(ref)).toEqual(expect.objectContaining({ gatewayId: held.gatewayId, sessionId }));
    await edge({ kind: 'client.unregister', client: ref, reason: 'left', gatewayId: held.gatewayId, sessionId });
  });

  it('reports the leaves and closes of a session with its session id', async () => {
    const { client, ref } = await registered(periodic);
    const sessionId = (await registration(ref))?.sessionId;
    expect(sessionId).toEqual(expect.any(String));
    await client.ok('join', { channelId: 'room-a' });
    await client.openPeerAudio('room-a', 'cn-1');
    await client.openPeerAudio('room-a', 'cn-2');
    await client.ok('connection.close', { connectionId: 'cn-1' });
    await client.ok('leave', { channelId: 'room-a' });
    await client.ok('join', { channelId: 'room-b' });
    await client.openPeerAudio('room-b', 'cn-3');
    // Ending the session closes cn-3 first.
    await client.ok('unregister');
    // Sent before the registry answered them: on this connection before the flush's answer.
    await nc.flush();
    const sent = removalReports.filter((r) => r.client.clientId === ref.clientId);
    expect(
      sent.map((r) => [r.kind, r.channelId, r.kind === 'connection.close' ? r.connectionId : null, r.sessionId]),
    ).toEqual([
      ['connection.close', 'room-a', 'cn-1', sessionId],
      ['client.leave', 'room-a', null, sessionId],
      ['connection.close', 'room-b', 'cn-3', sessionId],
    ]);
    expect(await registration(ref)).toBeNull();
  });

  it('unregisters a registration through it that it has no session for (a register whose answer was lost), and only that', async () => {
    const live = await registered(periodic);
    await live.client.ok('join', { channelId: 'room-a' });
    const unregisters = await metric(periodic, 'sync_reconcile_corrections_total', { report: 'unregister' });
    // The registry applied a register of the gateway whose answer the gateway did not get (it undid the session).
    const ghost: ClientRef = { applicationId: APP, ...identity() };
    await registerDirectly(ghost, periodic.gatewayId, randomUUID());
    await edge({ kind: 'client.join', client: ghost, channelId: 'room-a', claim: { id: 'room-a' } });
    expect(await channelsOf(ghost)).toEqual(['room-a']);

    await waitFor(async () => (await registration(ghost)) === null, {
      timeoutMs: 15000,
      description: 'the registration without a session to be unregistered',
    });
    await waitFor(
      async () =>
        (await metric(periodic, 'sync_reconcile_corrections_total', { report: 'unregister' })) >= unregisters + 1,
      { timeoutMs: 10000, description: 'the unregister counted' },
    );
    // The scans that found it twice saw the live client too: its registration and session stay.
    expect(await registration(live.ref)).toEqual(expect.objectContaining({ gatewayId: periodic.gatewayId }));
    expect(await channelsOf(live.ref)).toEqual(['room-a']);
    await passes(periodic, 3);
    expect(await registration(live.ref)).toEqual(expect.objectContaining({ gatewayId: periodic.gatewayId }));
    await live.client.ok('message', { channelId: 'room-a', message: 'still here' });
    expect(live.client.pushes).toEqual([]);
    // The client of the lost register may register through the gateway (its unregister was taken first).
    const again = await TestSyncClient.open(periodic.syncUrl);
    clients.push(again);
    await again.ok('register', {
      token: token({ userId: ghost.userId, deviceId: ghost.deviceId, clientId: ghost.clientId }),
      userAlias: 'Ann',
      tag: 'first',
    });
    await passes(periodic, 3);
    expect(await registration(ghost)).toEqual(expect.objectContaining({ gatewayId: periodic.gatewayId }));
    expect(again.pushes).toEqual([]);
  });

  it('reads its clients EDGE_SESSIONS_MAX_CLIENTS at a time: 501 clients, two requests per pass', async () => {
    const ids = Array.from({ length: 501 }, () => identity());
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(ids.slice(i, i + 50).map((id) => registered(crowded, id)));
    const ours = new Set(ids.map((id) => id.clientId));
    const seen = sessionReads.length;

    const reconnects = await passCounter(crowded, { trigger: 'reconnect' });
    crowdedProxy.cut();
    await unsubscribed(crowded);
    crowdedProxy.restore();
    await reconnects.after(1);
    // The reads went out before the pass ended: delivered to this subscription before the flush's answer.
    await nc.flush();

    const reads = sessionReads.slice(seen).filter((clients) => clients.some((c) => ours.has(c.clientId)));
    expect(reads.map((clients) => clients.length).sort((a, b) => a - b)).toEqual([1, 500]);
    expect(new Set(reads.flat().map((c) => c.clientId))).toEqual(ours);
    // Nothing differed: none of them got a push.
    expect(clients.flatMap((c) => c.pushes)).toEqual([]);
  }, 60000);
});
