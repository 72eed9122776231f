/**
 * `peer` connections use no media server: the edge relays their signalling between the two
 * clients (`connection.relay` → `connection.relayed`), and the media flows between them directly.
 */
import { waitFor } from '@switchboard/testing';
import { MediaSessionStack, type MediaParticipant, type Push } from '../../tools/testing/media-session-stack.js';
import { TestPublisher, TestSubscriber, type SessionDescription } from '../../tools/testing/webrtc-client.js';

const CHANNEL = 'p2p';

describe('peer connections relayed by the edge', () => {
  const stack = new MediaSessionStack();
  let ann: MediaParticipant;
  let bea: MediaParticipant;
  const peers: Array<TestPublisher | TestSubscriber> = [];

  const openPeer = (who: MediaParticipant, connectionId: string, remoteConnectionId: string) =>
    who.request('connection.open', {
      channelId: CHANNEL,
      connectionId,
      type: 'peer',
      remoteConnectionId,
      streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv' } },
    });
  const relayed = async (who: MediaParticipant, field: 'offer' | 'answer'): Promise<Push> => {
    await waitFor(() => who.pushesOf('connection.relayed').some((p) => p[field] !== undefined), {
      timeoutMs: 5000,
      description: `the relayed ${field}`,
    });
    return who.pushesOf('connection.relayed').find((p) => p[field] !== undefined)!;
  };

  beforeAll(async () => {
    await stack.start();
    ann = await stack.participant('ann', CHANNEL);
    bea = await stack.participant('bea', CHANNEL);
  }, 60000);

  afterAll(async () => {
    await Promise.all(peers.map((peer) => peer.close().catch(() => undefined)));
    await stack.stop();
  });

  it('relays offer and answer between the two sides; the media flows between them', async () => {
    const opened = await openPeer(ann, 'ann-to-bea', 'bea-to-ann');
    expect(opened).toMatchObject({ mediaServerId: null });
    await openPeer(bea, 'bea-to-ann', 'ann-to-bea');
    const sender = new TestPublisher();
    const receiver = new TestSubscriber();
    peers.push(sender, receiver);
    await ann.request('connection.relay', { connectionId: 'ann-to-bea', offer: await sender.offer() });
    const offer = await relayed(bea, 'offer');
    expect(offer).toMatchObject({ channelId: CHANNEL, connectionId: 'bea-to-ann', remoteConnectionId: 'ann-to-bea' });
    const answer = await receiver.answer(offer.offer as SessionDescription);
    await bea.request('connection.relay', { connectionId: 'bea-to-ann', answer });
    await sender.accept((await relayed(ann, 'answer')).answer as SessionDescription);
    sender.start();
    await waitFor(() => receiver.received.audioPackets > 10 && receiver.received.videoPackets > 5, {
      timeoutMs: 10000,
      description: "ann's media at bea, peer to peer",
    });
  }, 30000);

  it('refuses what is not a pair of peer connections naming each other', async () => {
    await openPeer(ann, 'ann-lonely', 'nobody-here');
    await expect(
      ann.request('connection.relay', { connectionId: 'ann-lonely', offer: { type: 'offer', sdp: 'v=0\r\n' } }),
    ).rejects.toMatchObject({ code: 'NotFound' });
    await openPeer(bea, 'bea-other', 'ann-to-bea');
    await expect(
      bea.request('connection.relay', { connectionId: 'bea-other', offer: { type: 'offer', sdp: 'v=0\r\n' } }),
    ).rejects.toMatchObject({ code: 'ValidationFailed' });
    await expect(ann.request('connection.relay', { connectionId: 'ann-to-bea' })).rejects.toMatchObject({
      code: 'ValidationFailed',
    });
    await ann.publish('ann-up');
    await expect(
      ann.request('connection.relay', { connectionId: 'ann-up', offer: { type: 'offer', sdp: 'v=0\r\n' } }),
    ).rejects.toMatchObject({ code: 'ValidationFailed' });
  }, 30000);
});
