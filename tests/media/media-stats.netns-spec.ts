/**
 * media-agent statistics with media flowing (run in the media network namespace by
 * media-plane.integration-spec.ts): `connection.stats` from Janus's Admin API for a publisher and
 * its subscriber, and `server.stats`.
 */
import type { MediaAgentEvent } from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import { startMediaStack, type MediaStack } from '../../tools/testing/media-stack.js';
import { connected, TestPublisher, TestSubscriber } from '../../tools/testing/webrtc-client.js';

const channel = { applicationId: 'app-stats', channelId: 'room-stats' };
type ConnectionStats = Extract<MediaAgentEvent, { kind: 'connection.stats' }>;
type ServerStats = Extract<MediaAgentEvent, { kind: 'server.stats' }>;

describe('media-agent statistics from Janus', () => {
  let stack: MediaStack;
  const publisher = new TestPublisher();
  const subscriber = new TestSubscriber();

  const statsOf = (connectionId: string) =>
    stack.events.filter((e): e is ConnectionStats => e.kind === 'connection.stats' && e.connectionId === connectionId);
  const serverStats = () => stack.events.filter((e): e is ServerStats => e.kind === 'server.stats');

  beforeAll(async () => {
    stack = await startMediaStack({ MEDIA_STATS_INTERVAL_MS: '300' });
  }, 30000);

  afterAll(async () => {
    await Promise.all([publisher.close(), subscriber.close()].map((p) => p.catch(() => undefined)));
    await stack?.stop();
  });

  it('reports growing packets and bytes, sane loss and jitter, per connection and for the server', async () => {
    await waitFor(() => serverStats().length > 0, { description: 'server.stats while idle' });
    expect(serverStats().at(-1)).toMatchObject({ activeConnections: 0, pendingConnections: 0, rooms: 0 });

    await stack.command({ kind: 'room.create', ...channel });
    const { answer } = await stack.command({
      kind: 'publisher.join',
      ...channel,
      connectionId: 'pub',
      offer: await publisher.offer(),
    });
    await publisher.accept(answer);
    await connected(publisher.pc);
    publisher.start();
    const { offer } = await stack.command({
      kind: 'subscriber.join',
      ...channel,
      connectionId: 'sub',
      remoteConnectionId: 'pub',
    });
    await stack.command({
      kind: 'subscriber.answer',
      ...channel,
      connectionId: 'sub',
      answer: await subscriber.answer(offer),
    });
    await connected(subscriber.pc);

    const startedAt = stack.events.length;
    const later = (connectionId: string) => statsOf(connectionId).filter((e) => stack.events.indexOf(e) >= startedAt);
    await waitFor(() => later('pub').length >= 4 && later('sub').length >= 4, {
      timeoutMs: 5000,
      description: 'four rounds of statistics',
    });
    const [pubFirst, pubLast] = [later('pub')[0]!, later('pub').at(-1)!];
    const [subFirst, subLast] = [later('sub')[0]!, later('sub').at(-1)!];
    process.stdout.write(`publisher stats ${JSON.stringify(pubLast)}\nsubscriber stats ${JSON.stringify(subLast)}\n`);

    // Janus receives the publisher's RTP and sends it to the subscriber: both counts grow.
    expect(pubLast).toMatchObject({ role: 'publisher', connected: true, ...channel });
    expect(pubLast.selectedPair).toContain('127.0.1.1');
    for (const kind of ['audio', 'video'] as const) {
      expect(pubLast[kind]!.packetsReceived).toBeGreaterThan(pubFirst[kind]!.packetsReceived);
      expect(pubLast[kind]!.bytesReceived).toBeGreaterThan(pubFirst[kind]!.bytesReceived);
      expect(subLast[kind]!.packetsSent).toBeGreaterThan(subFirst[kind]!.packetsSent);
      expect(subLast[kind]!.bytesSent).toBeGreaterThan(subFirst[kind]!.bytesSent);
      // Loopback: hardly any loss, jitter well under a frame interval.
      expect(pubLast[kind]!.packetsLost).toBeLessThanOrEqual(pubLast[kind]!.packetsReceived / 100);
      expect(pubLast[kind]!.jitterMs).toBeLessThan(50);
    }
    expect(pubLast.audio!.bitrateReceived).toBeGreaterThan(0);
    expect(subLast).toMatchObject({ role: 'subscriber', connected: true });

    await waitFor(() => serverStats().at(-1)?.activeConnections === 2, { description: 'both connections active' });
    expect(serverStats().at(-1)).toMatchObject({ pendingConnections: 0, rooms: 1, mixers: 0 });
    expect(serverStats().at(-1)!.bitrateReceived).toBeGreaterThan(0);
    expect(serverStats().at(-1)!.bitrateSent).toBeGreaterThan(0);
  });
});
