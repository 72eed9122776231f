/**
 * runtime-registry fed by a real media-agent and Janus (run in the media network namespace by
 * media-plane.integration-spec.ts): connections opened through the registry's edge subject as the
 * gateway opens them, their media set up through the agent's commands as the gateway will; then
 * Janus's webrtcup connects them in the registry (with a push to the gateway), a publisher leaving
 * closes its subscriber's connection, statistics reach the connection's events, and Janus killed
 * fails the connections and takes the media server out.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  waitFor,
  type SpawnedService,
} from '@switchboard/testing';
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  type TestClient,
} from '../../apps/runtime-registry/src/testing/harness.testing.js';
import { startMediaStack, type MediaStack } from '../../tools/testing/media-stack.js';
import { connected, TestPublisher, TestSubscriber } from '../../tools/testing/webrtc-client.js';

const ORG = 'org-media-events';
const GW = `gw-${randomUUID()}`;
const HEARTBEAT_TIMEOUT_SECONDS = 2;
const a = 'app-media-events';
const channelId = 'stage';

describe('runtime-registry with a real media-agent and Janus', () => {
  const ns = testNamespace('reg_media');
  let stack: MediaStack;
  let registry: SpawnedService;
  let nc: NatsConnection;
  let rt: RegistryClient;
  let gateway: FakeGateway;
  let events: EventReader;
  const clients: Array<TestPublisher | TestSubscriber> = [];
  const alice: TestClient = { applicationId: a, userId: 'alice', deviceId: 'd', clientId: 'c' };
  const bob: TestClient = { applicationId: a, userId: 'bob', deviceId: 'd', clientId: 'c' };
  const room = { applicationId: a, channelId };

  const info = (client: TestClient, connectionId: string) =>
    rt.query(OPERATOR, 'connection.get', { ...client, channelId, connectionId });
  const pushesFor = (connectionId: string) =>
    gateway.received.filter((r) => 'connectionId' in r.push && r.push.connectionId === connectionId).map((r) => r.push);
  const eventsOf = async (connectionId: string) =>
    (await events.all()).map((e) => e.event.event).filter((e) => e.connection?.id === connectionId);

  async function open(client: TestClient, connectionId: string, remoteConnectionId?: string) {
    const answer = await rt.edge({
      kind: 'connection.open',
      client,
      channelId,
      connectionId,
      type: 'sfu',
      tag: null,
      streams: { audio: { direction: remoteConnectionId ? 'recvonly' : 'sendonly' } },
      ...(remoteConnectionId ? { remoteConnectionId } : {}),
    });
    expect(answer.mediaServerId).toBe(stack.mediaServerId);
  }

  /** Opens an upstream in the registry and publishes it through the agent, as the gateway does. */
  async function publish(client: TestClient, connectionId: string): Promise<TestPublisher> {
    await open(client, connectionId);
    const publisher = new TestPublisher();
    clients.push(publisher);
    await stack.command({ kind: 'room.create', ...room });
    const offer = await publisher.offer();
    const { answer } = await stack.command({ kind: 'publisher.join', ...room, connectionId, offer });
    await publisher.accept(answer);
    await connected(publisher.pc);
    publisher.start();
    return publisher;
  }

  async function subscribe(client: TestClient, connectionId: string, remoteConnectionId: string) {
    await open(client, connectionId, remoteConnectionId);
    const subscriber = new TestSubscriber();
    clients.push(subscriber);
    const { offer } = await stack.command({ kind: 'subscriber.join', ...room, connectionId, remoteConnectionId });
    const answer = await subscriber.answer(offer);
    await stack.command({ kind: 'subscriber.answer', ...room, connectionId, answer });
    await connected(subscriber.pc);
  }

  beforeAll(async () => {
    stack = await startMediaStack(
      { MEDIA_STATS_INTERVAL_MS: '300', MEDIA_HEARTBEAT_INTERVAL_MS: '200' },
      { namespace: ns },
    );
    registry = await spawnService('runtime-registry', {
      ...serviceTestEnv(ns),
      HTTP_PORT: String(await freePort()),
      SERVER_HEARTBEAT_TIMEOUT_SECONDS: String(HEARTBEAT_TIMEOUT_SECONDS),
      REGISTRY_SWEEP_INTERVAL_MS: '200',
    });
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    gateway = await new FakeGateway(GW, nc, ns).start();
    await waitFor(async () => (await rt.query(OPERATOR, 'mediaservers.list', {})).some((m) => m.active), {
      timeoutMs: 10000,
      description: 'the agent-backed media server listed active',
    });
    events = await EventReader.open(nc, ns);
    for (const c of [alice, bob]) {
      await rt.edge(registerReport(c, ORG, GW));
      await rt.edge({ kind: 'client.join', client: c, channelId, claim: claim(channelId) });
    }
  }, 60000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    gateway?.stop();
    await events?.manager.streams.delete(events.stream).catch(() => undefined);
    await nc?.close();
    await registry?.stop();
    await stack?.stop();
  });

  it('Janus webrtcup connects the connections in the registry and tells the gateway', async () => {
    await publish(alice, 'pub-1');
    await waitFor(async () => (await info(alice, 'pub-1')).state === 'connected', { description: 'pub-1 connected' });
    await subscribe(bob, 'sub-1', 'pub-1');
    await waitFor(async () => (await info(bob, 'sub-1')).state === 'connected', { description: 'sub-1 connected' });
    for (const cn of ['pub-1', 'sub-1'])
      expect(pushesFor(cn)).toContainEqual({
        type: 'connection.state',
        channelId,
        connectionId: cn,
        state: 'connected',
      });
    const stats = await rt.query(OPERATOR, 'mediaserver.stats', { mediaServerId: stack.mediaServerId });
    expect(stats).toMatchObject({ activeConnections: 2, pendingConnections: 0 });
  });

  it("the statistics of Janus reach the connections' events and their transports", async () => {
    const withBytes = async (cn: string, field: 'bytesSent' | 'bytesReceived') =>
      (await eventsOf(cn)).find(
        (e) => e.type === 'connection.stats' && (e.connection?.stats?.[field] ?? 0) > 0 && e.origin === 'server',
      );
    const published = await waitFor(() => withBytes('pub-1', 'bytesSent'), { description: 'publisher stats' });
    expect(published.connection?.stats?.sendBitrate).toBeGreaterThan(0);
    await waitFor(() => withBytes('sub-1', 'bytesReceived'), { description: 'subscriber stats' });
    // Janus's selected ICE pair is the connection's transport on interface A.
    const [transport] = (await info(alice, 'pub-1')).transports;
    expect(transport).toMatchObject({ protocol: 'udp', relayed: false, state: 'connected' });
    expect(transport!.remoteAddress).toContain('127.0.1.1');
  });

  it("a publisher leaving closes its subscriber's connection with a remote-left push", async () => {
    await stack.command({ kind: 'connection.leave', ...room, connectionId: 'pub-1' });
    await rt.edge({ kind: 'connection.close', client: alice, channelId, connectionId: 'pub-1' });
    await waitFor(() => pushesFor('sub-1').some((p) => p.type === 'connection.ended'), {
      description: 'the subscriber told it ended',
    });
    expect(pushesFor('sub-1').find((p) => p.type === 'connection.ended')).toEqual({
      type: 'connection.ended',
      channelId,
      connectionId: 'sub-1',
      reason: 'remote-left',
    });
    await expect(info(bob, 'sub-1')).rejects.toMatchObject({ code: 'NotFound' });
    const closed = await waitFor(async () => (await eventsOf('sub-1')).find((e) => e.type === 'connection.closed'));
    expect(closed.origin).toBe('server');
  });

  it('Janus killed fails the connections with events and takes the media server out', async () => {
    await publish(alice, 'pub-2');
    await waitFor(async () => (await info(alice, 'pub-2')).state === 'connected', { description: 'pub-2 connected' });
    const killedAt = Date.now();
    await stack.janus.kill('SIGKILL');
    await waitFor(() => pushesFor('pub-2').some((p) => p.type === 'connection.ended'), {
      description: 'pub-2 told it ended',
    });
    expect(pushesFor('pub-2').find((p) => p.type === 'connection.ended')).toEqual({
      type: 'connection.ended',
      channelId,
      connectionId: 'pub-2',
      reason: 'media-server-lost',
    });
    await expect(info(alice, 'pub-2')).rejects.toMatchObject({ code: 'NotFound' });
    const failed = await waitFor(async () => (await eventsOf('pub-2')).find((e) => e.type === 'connection.failed'));
    expect(failed.connection?.error).toMatchObject({ code: 'MediaFailed' });
    await waitFor(
      async () => !(await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: stack.mediaServerId })).active,
      { description: 'the media server inactive' },
    );
    expect(Date.now() - killedAt).toBeLessThan(HEARTBEAT_TIMEOUT_SECONDS * 1000);
    await expect(open(alice, 'pub-3')).rejects.toMatchObject({ code: 'Unavailable' });
  });
});
