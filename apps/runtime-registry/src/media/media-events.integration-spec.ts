/**
 * Media-agent events in: published on `<ns>.media-agent.v1.<id>.events` exactly as an agent does,
 * they move the registry's connections (events with origin server, pushes to the client's gateway)
 * and fill their statistics; an event of a connection the registry does not hold on that server,
 * or an invalid one, changes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { MediaAgentSubjects, type Heartbeat, type MediaAgentEvent } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import { OperationJournal } from '../events/journal.js';
import { ConnectionLifecycle } from '../runtime/connection-lifecycle.js';
import { JournalRecovery } from '../runtime/journal-recovery.js';
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  startRegistry,
  type TestClient,
} from '../testing/harness.testing.js';

const ORG = 'org-mev';
const JANUS = randomUUID();
const GW = 'gw-mev';
const encoder = new TextEncoder();

describe('runtime-registry media events', () => {
  const ns = testNamespace('mevents');
  let registry: { app: INestApplication; url: string };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let events: EventReader;
  let gateway: FakeGateway;
  let beating: NodeJS.Timeout;
  const a = 'app-mev';
  const pub: TestClient = { applicationId: a, userId: 'pub', deviceId: 'd', clientId: 'c' };
  const sub: TestClient = { applicationId: a, userId: 'sub', deviceId: 'd', clientId: 'c' };
  const channelId = 'stage';
  let next = 0;

  const heartbeat: Heartbeat = {
    role: 'mediaserver',
    type: 'janus',
    server: { id: JANUS, region: null, version: '1.3', addresses: [], active: true, lastHeartbeat: '' },
  } as Heartbeat;

  async function publish(event: MediaAgentEvent, mediaServerId = JANUS) {
    const envelope = { mediaServerId, time: new Date().toISOString(), event };
    const subject = `${ns}.${MediaAgentSubjects.events(mediaServerId)}`;
    nc.publish(
      subject,
      encoder.encode(JSON.stringify({ pattern: MediaAgentSubjects.events(mediaServerId), data: envelope })),
    );
    await nc.flush();
  }

  async function open(client: TestClient, remoteConnectionId?: string) {
    const connectionId = `cn-${next++}`;
    await rt.edge({
      kind: 'connection.open',
      client,
      channelId,
      connectionId,
      type: 'sfu',
      tag: null,
      streams: { audio: { direction: remoteConnectionId ? 'recvonly' : 'sendonly' } },
      ...(remoteConnectionId ? { remoteConnectionId } : {}),
    });
    return connectionId;
  }

  const ids = (connectionId: string) => ({ applicationId: a, channelId, connectionId });
  const info = (client: TestClient, connectionId: string) =>
    rt.query(OPERATOR, 'connection.get', { ...client, channelId, connectionId });
  const eventsOf = async (connectionId: string) =>
    (await events.all()).map((e) => e.event.event).filter((e) => e.connection?.id === connectionId);

  beforeAll(async () => {
    // No housekeeping pass runs by itself: the journal test runs one.
    const env = { SERVER_HEARTBEAT_TIMEOUT_SECONDS: '2', EVENT_PUBLISH_TIMEOUT_MS: '300' };
    registry = await startRegistry(registryEnv(ns, { ...env, REGISTRY_SWEEP_INTERVAL_MS: '600000' }));
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    events = await EventReader.open(nc, ns);
    gateway = await new FakeGateway(GW, nc, ns).start();
    beating = setInterval(() => void rt.heartbeat(heartbeat).catch(() => undefined), 300);
    await rt.heartbeat(heartbeat);
    await waitFor(async () => (await rt.query(OPERATOR, 'mediaservers.list', {})).some((m) => m.active));
    for (const c of [pub, sub]) {
      await rt.edge(registerReport(c, ORG, GW));
      await rt.edge({ kind: 'client.join', client: c, channelId, claim: claim(channelId) });
    }
  });

  afterAll(async () => {
    clearInterval(beating);
    gateway?.stop();
    await events?.manager.streams.delete(events.stream).catch(() => undefined);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('webrtcup connects the connection and tells its gateway; the client may then report connected again', async () => {
    const cn = await open(pub);
    await rt.edge({ kind: 'connection.state', client: pub, channelId, connectionId: cn, state: 'initializing' });
    await publish({ kind: 'connection.webrtcup', ...ids(cn) });
    await waitFor(async () => (await info(pub, cn)).state === 'connected');
    await waitFor(() => gateway.of('connection.state').length > 0);
    expect(gateway.of('connection.state')).toEqual([
      expect.objectContaining({
        userId: 'pub',
        push: { type: 'connection.state', channelId, connectionId: cn, state: 'connected' },
      }),
    ]);
    const connected = await waitFor(async () => (await eventsOf(cn)).find((e) => e.type === 'connection.connected'));
    expect(connected.origin).toBe('server');
    await rt.edge({ kind: 'connection.state', client: pub, channelId, connectionId: cn, state: 'connected' });
    expect((await rt.query(OPERATOR, 'mediaserver.stats', { mediaServerId: JANUS })).activeConnections).toBe(1);
  });

  it('stats reach the stream as connection.stats, and the selected pair the connection info', async () => {
    const cn = await open(pub);
    const audio = {
      packetsReceived: 50,
      bytesReceived: 4000,
      packetsSent: 0,
      bytesSent: 0,
      bitrateReceived: 32000,
      bitrateSent: 0,
      packetsLost: 0,
      packetsLostByRemote: 0,
      jitterMs: 2,
      jitterRemoteMs: 0,
      nacksReceived: 0,
      nacksSent: 0,
    };
    // The client reported its video frame size: Janus measures none, so that one stays.
    const frame = { frameWidth: 640, frameHeight: 480, frameRate: 30 };
    await rt.edge({ kind: 'connection.stats', client: pub, channelId, connectionId: cn, stats: frame });
    const selectedPair = '127.0.1.1:40012 [host,udp] <-> 127.0.0.9:53211 [host,udp]';
    await publish({ kind: 'connection.stats', ...ids(cn), role: 'publisher', connected: true, selectedPair, audio });
    const event = await waitFor(async () =>
      (await eventsOf(cn)).find((e) => e.type === 'connection.stats' && e.origin === 'server'),
    );
    expect(event.connection?.stats).toMatchObject(frame);
    // The selected pair is the connection's transport on interface A.
    expect((await info(pub, cn)).transports).toEqual([
      expect.objectContaining({
        localAddress: '127.0.0.9:53211',
        remoteAddress: '127.0.1.1:40012',
        state: 'connected',
      }),
    ]);
    expect(event.connection?.stats).toMatchObject({
      bytesSent: 4000,
      bytesReceived: 0,
      sendBitrate: 32000,
      packetsSent: 50,
    });
    expect(event.origin).toBe('server');
  });

  it('a hangup fails the connection (MediaFailed) and tells its gateway it ended', async () => {
    const cn = await open(pub);
    gateway.clear();
    await publish({ kind: 'connection.hangup', ...ids(cn), reason: 'DTLS alert' });
    await waitFor(() => gateway.of('connection.ended').length > 0);
    expect(gateway.of('connection.ended')[0]!.push).toEqual({
      type: 'connection.ended',
      channelId,
      connectionId: cn,
      reason: 'failed',
    });
    await expect(info(pub, cn)).rejects.toMatchObject({ code: 'NotFound' });
    const failed = await waitFor(async () => (await eventsOf(cn)).find((e) => e.type === 'connection.failed'));
    expect(failed.connection?.error).toEqual({ code: 'MediaFailed', message: 'DTLS alert' });
    expect(failed.origin).toBe('server');
  });

  it('the end of a subscription closes the subscriber; a lost media server fails the connection', async () => {
    const upstream = await open(pub);
    const downstream = await open(sub, upstream);
    gateway.clear();
    await publish({ kind: 'subscription.ended', ...ids(downstream), remoteConnectionId: upstream, reason: 'left' });
    await waitFor(() => gateway.of('connection.ended').length > 0);
    expect(gateway.of('connection.ended')[0]).toMatchObject({
      userId: 'sub',
      push: { type: 'connection.ended', channelId, connectionId: downstream, reason: 'remote-left' },
    });
    const closed = await waitFor(async () => (await eventsOf(downstream)).find((e) => e.type === 'connection.closed'));
    expect(closed.origin).toBe('server');
    await publish({ kind: 'connection.ended', ...ids(upstream), reason: 'media-server-lost' });
    await waitFor(() => gateway.of('connection.ended').length > 1);
    expect(gateway.of('connection.ended')[1]!.push).toMatchObject({
      connectionId: upstream,
      reason: 'media-server-lost',
    });
  });

  it('a connection the agent ended by a kick is closed if still open; one it says left is left to the edge', async () => {
    const [kicked, left] = [await open(pub), await open(pub)];
    gateway.clear();
    await publish({ kind: 'connection.ended', ...ids(left), reason: 'left' });
    await publish({ kind: 'connection.ended', ...ids(kicked), reason: 'room-destroyed' });
    await waitFor(() => gateway.of('kicked').length > 0);
    expect(gateway.received.map((r) => r.push)).toEqual([{ type: 'kicked', channelId, connectionId: kicked }]);
    await expect(info(pub, kicked)).rejects.toMatchObject({ code: 'NotFound' });
    expect((await info(pub, left)).state).toBe('new');
  });

  it('forwards a renegotiation offer to the gateway without a state change', async () => {
    const cn = await open(pub);
    gateway.clear();
    const offer = { type: 'offer' as const, sdp: 'v=0\r\n' };
    await publish({ kind: 'connection.offer', ...ids(cn), offer });
    await waitFor(() => gateway.of('connection.offer').length > 0);
    expect(gateway.of('connection.offer')[0]!.push).toEqual({
      type: 'connection.offer',
      channelId,
      connectionId: cn,
      offer,
    });
    expect((await info(pub, cn)).state).toBe('new');
  });

  it('ignores events of another media server, of unknown connections, and invalid ones', async () => {
    const cn = await open(pub);
    gateway.clear();
    await publish({ kind: 'connection.webrtcup', ...ids(cn) }, randomUUID());
    await publish({ kind: 'connection.webrtcup', ...ids('nobody') });
    nc.publish(`${ns}.${MediaAgentSubjects.events(JANUS)}`, encoder.encode('{"not":"an event"}'));
    // An event published after them is handled: the ones before it were seen and changed nothing.
    const probe = await open(pub);
    await publish({ kind: 'connection.webrtcup', ...ids(probe) });
    await waitFor(async () => (await info(pub, probe)).state === 'connected');
    expect((await info(pub, cn)).state).toBe('new');
    expect(gateway.of('connection.state').map((r) => r.push)).toEqual([
      expect.objectContaining({ connectionId: probe }),
    ]);
    const metrics = (await (await fetch(`${registry.url}/metrics`)).text()).split('\n');
    const rejected = metrics.find((l) => l.startsWith('registry_media_events_total') && l.includes('"rejected"'));
    expect(rejected).toMatch(/ 1$/);
  });

  it('the events of a media state change whose replica stopped before publishing them come from the journal', async () => {
    const cn = await open(pub);
    const ref = { userId: 'pub', deviceId: 'd', clientId: 'c', channelId, connectionId: cn };
    const journal = registry.app.get(OperationJournal);
    const entry = journal.open({ kind: 'media', applicationId: a, connection: ref, state: 'connected' });
    // Applied and journaled, its events never published: as a replica that stopped right after the script.
    await registry.app.get(ConnectionLifecycle).moveMediaState(a, ref, 'connected', ['new'], JANUS, null, entry);
    const recovery = registry.app.get(JournalRecovery);
    await waitFor(async () => (await recovery.recover()) > 0, { timeoutMs: 15000, description: 'the entry recovered' });
    const connected = await waitFor(async () => (await eventsOf(cn)).find((e) => e.type === 'connection.connected'));
    expect(connected.origin).toBe('server');
  }, 20000);
});
