/**
 * media-agent room control with media flowing: a real Janus, the agent (spawned from dist/) and
 * NATS, and werift WebRTC clients, all in the media network namespace (run by
 * media-plane.integration-spec.ts). Two publishers, two subscribing clients with one downstream
 * connection per publisher; RTP counted at the receivers.
 */
import { DomainError, type MediaAgentEvent } from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import { startMediaStack, type MediaStack } from '../../tools/testing/media-stack.js';
import { connected, TestPublisher, TestSubscriber, type Candidate } from '../../tools/testing/webrtc-client.js';

const channel = { applicationId: 'app-media', channelId: 'room-1' };
const PUBLISHERS = ['pub-a', 'pub-b'] as const;
const CLIENTS = ['sub-1', 'sub-2'] as const;
type PublisherId = (typeof PUBLISHERS)[number];

/** Downstream connection id of `client` receiving `publisher`. */
const downstream = (client: string, publisher: PublisherId) => `${client}-${publisher}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('media-agent rooms with real Janus and WebRTC clients', () => {
  let stack: MediaStack;
  const publishers = new Map<PublisherId, TestPublisher>();
  const subscribers = new Map<string, TestSubscriber>();

  const eventsOf = (kind: MediaAgentEvent['kind'], connectionId?: string) =>
    stack.events.filter(
      (e) =>
        e.kind === kind && (connectionId === undefined || ('connectionId' in e && e.connectionId === connectionId)),
    );
  const receivedFrom = (publisher: PublisherId) => CLIENTS.map((c) => subscribers.get(downstream(c, publisher))!);
  const audioFrom = (publisher: PublisherId) => receivedFrom(publisher).map((s) => s.received.audioPackets);

  beforeAll(async () => {
    stack = await startMediaStack();
  }, 30000);

  afterAll(async () => {
    await Promise.all([...publishers.values(), ...subscribers.values()].map((c) => c.close().catch(() => undefined)));
    await stack?.stop();
  });

  it('refuses a malformed command and a command for a channel without a room', async () => {
    await expect(stack.rawCommand({ kind: 'room.create', applicationId: 'a' })).rejects.toMatchObject({
      code: 'ValidationFailed',
    });
    await expect(stack.rawCommand({ kind: 'room.explode', ...channel })).rejects.toMatchObject({
      code: 'ValidationFailed',
    });
    const refused = await stack.command({ kind: 'connection.leave', ...channel, connectionId: 'x' });
    expect(refused).toEqual({ left: false });
    await expect(
      stack.command({ kind: 'subscriber.join', ...channel, connectionId: 'x', remoteConnectionId: 'y' }),
    ).rejects.toBeInstanceOf(DomainError);
  });

  it('carries every publisher to every subscriber (2 publishers, 2 clients receiving both), with webrtcup events', async () => {
    const started = Date.now();
    expect(await stack.command({ kind: 'room.create', ...channel })).toEqual({ created: true });
    expect(await stack.command({ kind: 'room.create', ...channel })).toEqual({ created: false });

    // pub-a sends its candidates in the offer; pub-b trickles them after the offer.
    for (const id of PUBLISHERS) {
      const publisher = new TestPublisher();
      publishers.set(id, publisher);
      const trickled: Array<Candidate | null> = [];
      const offer = await publisher.offer(id === 'pub-b' ? { trickle: (c) => trickled.push(c) } : {});
      const { answer } = await stack.command({
        kind: 'publisher.join',
        ...channel,
        connectionId: id,
        display: id,
        offer,
      });
      await publisher.accept(answer);
      if (id === 'pub-b') {
        await waitFor(() => trickled.includes(null), { description: 'the end of gathering' });
        const candidates = trickled.filter((c): c is Candidate => c !== null);
        expect(candidates.length).toBeGreaterThan(0);
        await stack.command({ kind: 'connection.trickle', ...channel, connectionId: id, candidates, completed: true });
      }
      await connected(publisher.pc);
      publisher.start();
    }
    await waitFor(() => PUBLISHERS.every((id) => eventsOf('connection.webrtcup', id).length === 1), {
      description: 'webrtcup of both publishers',
    });

    for (const client of CLIENTS) {
      for (const publisher of PUBLISHERS) {
        const connectionId = downstream(client, publisher);
        const subscriber = new TestSubscriber();
        subscribers.set(connectionId, subscriber);
        const { offer } = await stack.command({
          kind: 'subscriber.join',
          ...channel,
          connectionId,
          remoteConnectionId: publisher,
        });
        const answer = await subscriber.answer(offer);
        expect(await stack.command({ kind: 'subscriber.answer', ...channel, connectionId, answer })).toBeNull();
      }
    }
    await Promise.all([...subscribers.values()].map((s) => connected(s.pc)));
    await waitFor(
      () => [...subscribers.values()].every((s) => s.received.audioPackets > 5 && s.received.videoPackets > 2),
      { timeoutMs: 5000, description: 'RTP from every publisher at every subscriber' },
    );
    for (const subscriber of subscribers.values()) {
      expect(subscriber.received.audioBytes).toBeGreaterThan(0);
      expect(subscriber.received.videoBytes).toBeGreaterThan(0);
    }
    await waitFor(() => [...subscribers.keys()].every((id) => eventsOf('connection.webrtcup', id).length === 1), {
      description: 'webrtcup of every subscriber',
    });
    // Janus tells when media of each kind starts arriving from a publisher.
    for (const id of PUBLISHERS)
      expect(eventsOf('connection.media', id)).toEqual(
        expect.arrayContaining(
          ['audio', 'video'].map((mediaType) => expect.objectContaining({ mediaType, receiving: true })),
        ),
      );
    const { rooms } = await stack.command({ kind: 'rooms.list' });
    expect(rooms).toEqual([
      {
        ...channel,
        connections: expect.arrayContaining([
          { connectionId: 'pub-a', role: 'publisher' },
          { connectionId: downstream('sub-2', 'pub-b'), role: 'subscriber', remoteConnectionId: 'pub-b' },
        ]),
      },
    ]);
    expect(rooms[0]!.connections).toHaveLength(6);
    const metrics = await (await fetch(`${stack.agent.url}/metrics`)).text();
    expect(metrics).toMatch(/^media_agent_rooms({[^}]*})? 1$/m);
    expect(metrics).toMatch(/^media_agent_connections({[^}]*})? 6$/m);
    process.stdout.write(`room with 2 publishers and 4 downstream connections flowing in ${Date.now() - started} ms\n`);
  });

  it("a publisher's data channel messages reach its subscribers", async () => {
    const publisher = publishers.get('pub-a')!;
    await waitFor(() => publisher.data.readyState === 'open', { description: 'the data channel open' });
    publisher.data.send('hello from pub-a');
    await waitFor(() => receivedFrom('pub-a').every((s) => s.messages.includes('hello from pub-a')), {
      description: 'the message at both subscribers of pub-a',
    });
    expect(receivedFrom('pub-b').map((s) => s.messages)).toEqual([[], []]);
  });

  it('moderate stops the audio of one publisher at its receivers within 1 s, and unmoderate resumes it', async () => {
    // Flowing before: the last audio of pub-a is at most 100 ms old at each receiver.
    await waitFor(() => receivedFrom('pub-a').every((r) => Date.now() - r.received.lastAudioAt < 100));
    const asked = Date.now();
    const moderated = await stack.command({
      kind: 'connections.moderate',
      ...channel,
      connectionIds: ['pub-a', 'sub-1-pub-b'],
      audioMuted: true,
    });
    expect(moderated).toEqual({ moderated: ['pub-a'] });
    const otherAt = audioFrom('pub-b');
    const videoAt = receivedFrom('pub-a').map((s) => s.received.videoPackets);
    // Stopped within 1 s of the request: no audio of pub-a arrived later than that, in a 1.6 s watch.
    await sleep(1600);
    const lastAudio = receivedFrom('pub-a').map((s) => s.received.lastAudioAt);
    lastAudio.forEach((at) => expect(at - asked).toBeLessThan(1000));
    audioFrom('pub-b').forEach((count, i) => expect(count).toBeGreaterThan(otherAt[i]!));
    receivedFrom('pub-a').forEach((s, i) => expect(s.received.videoPackets).toBeGreaterThan(videoAt[i]!));
    process.stdout.write(
      `moderate: last audio packet at the receivers ${lastAudio.map((at) => at - asked).join(', ')} ms after the request\n`,
    );

    const resumedFrom = audioFrom('pub-a');
    await stack.command({ kind: 'connections.moderate', ...channel, connectionIds: ['pub-a'], audioMuted: false });
    await waitFor(() => audioFrom('pub-a').every((count, i) => count > resumedFrom[i]! + 5), {
      timeoutMs: 1000,
      description: 'audio of pub-a again at both receivers',
    });
  });

  it('moderate video stops the video of a publisher, not its audio, until unmoderated', async () => {
    const asked = Date.now();
    await stack.command({ kind: 'connections.moderate', ...channel, connectionIds: ['pub-b'], videoMuted: true });
    const audioAt = audioFrom('pub-b');
    await sleep(1300);
    receivedFrom('pub-b').forEach((s) => expect(s.received.lastVideoAt - asked).toBeLessThan(1000));
    audioFrom('pub-b').forEach((count, i) => expect(count).toBeGreaterThan(audioAt[i]!));
    const videoAt = receivedFrom('pub-b').map((s) => s.received.videoPackets);
    await stack.command({ kind: 'connections.moderate', ...channel, connectionIds: ['pub-b'], videoMuted: false });
    await waitFor(() => receivedFrom('pub-b').every((s, i) => s.received.videoPackets > videoAt[i]! + 3), {
      timeoutMs: 1000,
      description: 'video of pub-b again at both receivers',
    });
  });

  it("kick ends the kicked publisher's media and tells its subscribers", async () => {
    const { kicked } = await stack.command({ kind: 'connections.kick', ...channel, connectionIds: ['pub-a'] });
    expect(kicked).toEqual(['pub-a']);
    expect(eventsOf('connection.ended', 'pub-a')).toEqual([
      expect.objectContaining({ kind: 'connection.ended', reason: 'kicked' }),
    ]);
    await waitFor(() => CLIENTS.every((c) => eventsOf('subscription.ended', downstream(c, 'pub-a')).length === 1));
    expect(eventsOf('subscription.ended')).toEqual(
      CLIENTS.map((c) =>
        expect.objectContaining({
          connectionId: downstream(c, 'pub-a'),
          remoteConnectionId: 'pub-a',
          reason: 'kicked',
        }),
      ),
    );
    // Janus closed pub-a's PeerConnection with the kick: what was in flight has arrived after 300 ms.
    await sleep(300);
    const stoppedAt = receivedFrom('pub-a').map((s) => s.received.audioPackets + s.received.videoPackets);
    const otherAt = audioFrom('pub-b');
    await sleep(500);
    expect(receivedFrom('pub-a').map((s) => s.received.audioPackets + s.received.videoPackets)).toEqual(stoppedAt);
    audioFrom('pub-b').forEach((count, i) => expect(count).toBeGreaterThan(otherAt[i]!));
  });

  it('a publisher that leaves: its subscribers are told, its media ends and its handle is freed', async () => {
    // The agent's room-control handle plus pub-b and the four downstream connections: pub-a's went with the kick.
    expect(await stack.janusHandles()).toBe(6);
    expect(await stack.command({ kind: 'connection.leave', ...channel, connectionId: 'pub-b' })).toEqual({
      left: true,
    });
    expect(eventsOf('connection.ended', 'pub-b')).toEqual([expect.objectContaining({ reason: 'left' })]);
    await waitFor(() => CLIENTS.every((c) => eventsOf('subscription.ended', downstream(c, 'pub-b')).length === 1));
    expect(eventsOf('subscription.ended', downstream('sub-1', 'pub-b'))).toEqual([
      expect.objectContaining({ remoteConnectionId: 'pub-b', reason: 'left' }),
    ]);
    expect(await stack.janusHandles()).toBe(5);
    await sleep(300);
    const stoppedAt = receivedFrom('pub-b').map((s) => s.received.audioPackets + s.received.videoPackets);
    await sleep(400);
    expect(receivedFrom('pub-b').map((s) => s.received.audioPackets + s.received.videoPackets)).toEqual(stoppedAt);
    // Janus renegotiates the subscriptions of a publisher that left (not of a kicked one): the clients answer.
    await waitFor(() => CLIENTS.every((c) => eventsOf('connection.offer', downstream(c, 'pub-b')).length > 0));
    for (const client of CLIENTS) {
      const connectionId = downstream(client, 'pub-b');
      const [event] = eventsOf('connection.offer', connectionId);
      if (event?.kind !== 'connection.offer') throw new Error('no offer');
      const answer = await subscribers.get(connectionId)!.answer(event.offer);
      expect(await stack.command({ kind: 'subscriber.answer', ...channel, connectionId, answer })).toBeNull();
    }
    expect(await stack.command({ kind: 'connection.leave', ...channel, connectionId: 'pub-b' })).toEqual({
      left: false,
    });
  });

  it('destroying the room ends its connections and frees their Janus handles', async () => {
    expect(await stack.janusHandles()).toBe(5);
    const result = await stack.command({ kind: 'room.destroy', ...channel });
    expect(result.destroyed).toBe(true);
    expect([...result.connectionIds].sort()).toEqual(
      CLIENTS.flatMap((c) => PUBLISHERS.map((p) => downstream(c, p))).sort(),
    );
    expect(await stack.janusHandles()).toBe(1);
    expect(eventsOf('connection.ended').filter((e) => 'reason' in e && e.reason === 'room-destroyed')).toHaveLength(4);
    await expect(
      stack.command({ kind: 'connections.kick', ...channel, connectionIds: ['pub-b'] }),
    ).rejects.toMatchObject({ code: 'NotFound' });
    expect(eventsOf('room.ended')).toEqual([{ kind: 'room.ended', ...channel, reason: 'destroyed' }]);
    expect(await stack.command({ kind: 'room.destroy', ...channel })).toEqual({ destroyed: false, connectionIds: [] });
  });
});
