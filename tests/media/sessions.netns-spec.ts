/**
 * Real sessions end to end: participants register over `/sync`, the registry places their sfu
 * connections on the Janus of a media-agent, and the gateway signals their werift PeerConnections
 * with it. Two publishers and two subscribing clients in one channel (issue 22, "What it must show").
 */
import { waitFor } from '@switchboard/testing';
import { MediaSessionStack, type MediaParticipant } from '../../tools/testing/media-session-stack.js';

const CHANNEL = 'call-1';
const PUBLISHERS = ['alice', 'bob'] as const;
const RECEIVERS = ['carol', 'dave'] as const;
const upstream = (user: string) => `${user}-up`;
const downstream = (receiver: string, publisher: string) => `${receiver}-from-${publisher}`;
const upstreamIdOf = (push: { upstream?: unknown }) =>
  (push.upstream as { connectionId?: string } | undefined)?.connectionId;

describe('real sessions through /sync, the registry and Janus', () => {
  const stack = new MediaSessionStack();
  const people = new Map<string, MediaParticipant>();

  beforeAll(async () => {
    await stack.start();
  }, 60000);

  afterAll(async () => {
    await stack.stop();
  });

  const connectionInfo = (user: string, connectionId: string) =>
    stack.a<{ state: string }>(
      'GET',
      `/applications/${stack.applicationId}/channels/${CHANNEL}/users/${user}/devices/${user}-device/clients/${user}-client/connections/${connectionId}`,
    );

  it('gives every client ICE servers and protocol version 2 at register', async () => {
    const alice = await stack.participant('alice', CHANNEL);
    people.set('alice', alice);
    expect(alice.registered).toMatchObject({ protocolVersion: 2, iceServers: [] });
  });

  it('carries both publishers to both receivers, signalled over /sync, with states from Janus', async () => {
    for (const user of [...PUBLISHERS, ...RECEIVERS])
      if (!people.has(user)) people.set(user, await stack.participant(user, CHANNEL));
    for (const user of PUBLISHERS) await people.get(user)!.publish(upstream(user));
    for (const receiver of RECEIVERS)
      for (const publisher of PUBLISHERS)
        await people.get(receiver)!.subscribe(downstream(receiver, publisher), upstream(publisher));

    const subscribers = RECEIVERS.flatMap((receiver) =>
      PUBLISHERS.map((publisher) => people.get(receiver)!.subscribers.get(downstream(receiver, publisher))!),
    );
    await waitFor(() => subscribers.every((s) => s.received.audioPackets > 10 && s.received.videoPackets > 5), {
      timeoutMs: 15000,
      description: 'RTP of every publisher at every receiver',
    });

    // Connected because Janus said the PeerConnection is up: pushed to the client, shown on interface A.
    for (const user of PUBLISHERS) {
      const publisher = people.get(user)!;
      await waitFor(() => publisher.pushesOf('connection.state', upstream(user)).some((p) => p.state === 'connected'), {
        timeoutMs: 10000,
        description: `${user}'s connected push`,
      });
      expect(await connectionInfo(user, upstream(user))).toMatchObject({ state: 'connected' });
    }
    // Every connection counts as active on the agent's server (interface A media server statistics).
    await waitFor(
      async () =>
        (await stack.a<{ activeConnections: number }>('GET', `/mediaservers/${stack.media.mediaServerId}/stats`))
          .activeConnections ===
        PUBLISHERS.length * (1 + RECEIVERS.length),
      { timeoutMs: 10000, description: 'six active connections on the media server' },
    );
  }, 90000);

  it('tells the other clients of the channel about the upstreams as they start and end, and lists them at join', async () => {
    for (const receiver of RECEIVERS) {
      const pushes = people.get(receiver)!.pushesOf('upstream.opened');
      await waitFor(() => PUBLISHERS.every((p) => pushes.some((push) => upstreamIdOf(push) === upstream(p))), {
        timeoutMs: 5000,
        description: `upstream.opened of both publishers at ${receiver}`,
      });
      expect(people.get(receiver)!.pushesOf('upstream.opened')).toContainEqual(
        expect.objectContaining({
          channelId: CHANNEL,
          upstream: expect.objectContaining({ connectionId: upstream('alice'), userId: 'alice', audio: true }),
        }),
      );
    }
    // A client joining now finds them in its join result (not its own).
    const frank = await stack.participant('frank', CHANNEL);
    const listed = (frank.joined.upstreams as Array<{ connectionId: string }>).map((u) => u.connectionId).sort();
    expect(listed).toEqual(PUBLISHERS.map(upstream).sort());
    await frank.publish('frank-up');
    const carol = people.get('carol')!;
    await waitFor(() => carol.pushesOf('upstream.opened').some((p) => upstreamIdOf(p) === 'frank-up'), {
      timeoutMs: 5000,
      description: "frank's upstream.opened at carol",
    });
    await frank.request('connection.close', { connectionId: 'frank-up' });
    await waitFor(() => carol.pushesOf('upstream.closed', 'frank-up').length > 0, {
      timeoutMs: 5000,
      description: "frank's upstream.closed at carol",
    });
    expect(frank.pushesOf('upstream.opened').some((p) => upstreamIdOf(p) === 'frank-up')).toBe(false);
  }, 30000);

  it('refuses a client that claims connected before Janus says so', async () => {
    const erin = await stack.participant('erin', CHANNEL);
    await erin.request('connection.open', {
      channelId: CHANNEL,
      connectionId: 'erin-up',
      type: 'sfu',
      streams: { audio: { direction: 'sendonly' } },
    });
    await erin.request('connection.state', { connectionId: 'erin-up', state: 'initializing' });
    await erin.request('connection.state', { connectionId: 'erin-up', state: 'connecting' });
    await expect(
      erin.request('connection.state', { connectionId: 'erin-up', state: 'connected' }),
    ).rejects.toMatchObject({
      code: 'Conflict',
    });
    await erin.request('connection.close', { connectionId: 'erin-up' });
  });

  it('relays a data channel message from a publisher to its subscribers', async () => {
    const alice = people.get('alice')!;
    alice.publishers.get(upstream('alice'))!.data.send('hello from alice');
    for (const receiver of RECEIVERS) {
      const subscriber = people.get(receiver)!.subscribers.get(downstream(receiver, 'alice'))!;
      await waitFor(() => subscriber.messages.includes('hello from alice'), {
        timeoutMs: 5000,
        description: `the message at ${receiver}`,
      });
    }
  });

  it('refuses signalling for an unknown connection, and an offer for a downstream connection', async () => {
    const carol = people.get('carol')!;
    await expect(
      carol.request('connection.offer', { connectionId: 'nope', offer: { type: 'offer', sdp: 'v=0\r\n' } }),
    ).rejects.toMatchObject({ code: 'UnknownConnection' });
    await expect(
      carol.request('connection.offer', {
        connectionId: downstream('carol', 'alice'),
        offer: { type: 'offer', sdp: 'v=0\r\n' },
      }),
    ).rejects.toMatchObject({ code: 'ValidationFailed' });
    await expect(carol.request('connection.subscribe', { connectionId: '\u0000' })).rejects.toMatchObject({
      code: 'ValidationFailed',
    });
  });
});
