import type { ServerPush } from '@switchboard/contracts';
import { Client } from './client.js';
import { FakeGateway, FakePeerConnection, FakeTrack, noSettings, tokenExpiringAt, until } from './fakes.testing.js';
import type { PeerConnectionConstructor } from './platform.js';

async function registered() {
  const gateway = new FakeGateway();
  const client = new Client({
    url: 'ws://gateway/sync',
    WebSocket: gateway.WebSocket,
    RTCPeerConnection: FakePeerConnection as unknown as PeerConnectionConstructor,
    statsIntervalMs: 0,
  });
  await client.register(tokenExpiringAt(Math.floor(Date.now() / 1000) + 3600));
  await client.join('room');
  // Peer connections are on no media server.
  gateway.handlers['connection.open'] = (data) => ({
    result: {
      connectionId: data.connectionId,
      channelId: 'room',
      state: 'new',
      mediaServerId: null,
      settings: noSettings,
    },
  });
  return { gateway, client };
}

type Relayed = Omit<Extract<ServerPush, { type: 'connection.relayed' }>, 'type' | 'channelId'>;
const relayed = (gateway: FakeGateway, push: Relayed) =>
  gateway.socket.push({ type: 'connection.relayed', channelId: 'room', ...push });

const afterJoin = (gateway: FakeGateway) =>
  gateway.requests.slice(2).map((frame) => {
    const data = frame.data ?? {};
    const signal = ['offer', 'answer', 'candidates'].find((field) => field in data);
    return [frame.type, data.state, frame.type === 'connection.relay' ? signal : undefined].filter(Boolean).join(':');
  });

afterEach(() => {
  FakePeerConnection.instances.length = 0;
});

describe('PeerConnection (openPeer)', () => {
  it('offers from the side whose id sorts first, retrying until the other side opened; trickles by relay', async () => {
    const { gateway, client } = await registered();
    let notOpenYet = 2;
    gateway.handlers['connection.relay'] = (data) =>
      data.offer && notOpenYet-- > 0
        ? { error: { code: 'NotFound', message: 'The remote peer connection b-to-a is not open in the channel.' } }
        : { result: { connectionId: data.connectionId } };
    const audio = new FakeTrack('audio');
    const opening = client.openPeer('room', 'b-to-a', { connectionId: 'a-to-b', audio, data: true });
    const pc = FakePeerConnection.last;
    await until(() => gateway.sent('connection.relay').length === 3);
    expect(gateway.sent('connection.open')[0]!.data).toEqual({
      channelId: 'room',
      connectionId: 'a-to-b',
      type: 'peer',
      tag: null,
      remoteConnectionId: 'b-to-a',
      streams: {
        audio: { direction: 'sendrecv', muted: false },
        video: { direction: 'recvonly' },
        data: { direction: 'sendrecv' },
      },
    });
    // Its audio sent, video offered to be received, the data channel opened by the offerer.
    expect(pc.addedTracks).toEqual([audio]);
    expect(pc.transceivers).toEqual([{ track: 'video', direction: 'recvonly' }]);
    expect(pc.dataChannels).toEqual(['switchboard']);
    expect(gateway.sent('connection.relay')[2]!.data).toEqual({
      connectionId: 'a-to-b',
      offer: { type: 'offer', sdp: 'local-offer-1' },
    });

    pc.gather('candidate:1 1 udp 1 10.0.0.1 5000 typ host');
    pc.finishGathering();
    relayed(gateway, { connectionId: 'a-to-b', remoteConnectionId: 'b-to-a', answer: { type: 'answer', sdp: 'b' } });
    const peer = await opening;
    expect(peer.offerer).toBe(true);
    expect(peer.mediaServerId).toBeNull();
    expect(pc.remoteDescriptions).toEqual([{ type: 'answer', sdp: 'b' }]);
    await until(() => gateway.sent('connection.relay').some((frame) => frame.data!.completed));
    expect(gateway.sent('connection.relay').at(-1)!.data).toEqual({
      connectionId: 'a-to-b',
      candidates: [
        {
          candidate: 'candidate:1 1 udp 1 10.0.0.1 5000 typ host',
          sdpMid: '0',
          sdpMLineIndex: 0,
          usernameFragment: null,
        },
      ],
      completed: true,
    });
    expect(gateway.sent('connection.candidates')).toEqual([]);
  });

  it('answers the relayed offer (its candidates held until then); reports connected, stats, and the remote close', async () => {
    const { gateway, client } = await registered();
    const audio = new FakeTrack('audio');
    const opening = client.openPeer('room', 'a-to-b', { connectionId: 'b-to-a', audio });
    const pc = FakePeerConnection.last;
    const candidate = { candidate: 'candidate:9 1 udp 1 10.0.0.2 6000 typ host', sdpMid: '0', sdpMLineIndex: 0 };
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', candidates: [candidate] });
    await until(() => gateway.sent('connection.state').length === 2);
    expect(pc.addedCandidates).toEqual([]);
    expect(pc.addedTracks).toEqual([]);
    const offer = { type: 'offer' as const, sdp: 'offer-of-a' };
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', offer });
    const peer = await opening;
    expect(peer.offerer).toBe(false);
    expect(pc.remoteDescriptions).toEqual([offer]);
    expect(pc.addedCandidates).toEqual([candidate]);
    // The audio goes into the offer's transceiver (addTrack after the remote description).
    expect(pc.addedTracks).toEqual([audio]);
    expect(pc.transceivers).toEqual([]);
    expect(gateway.sent('connection.relay')[0]!.data).toEqual({
      connectionId: 'b-to-a',
      answer: { type: 'answer', sdp: 'local-answer-to-offer-of-a' },
    });
    expect(afterJoin(gateway)).toEqual([
      'connection.open',
      'connection.state:initializing',
      'connection.state:connecting',
      'connection.relay:answer',
    ]);

    // No media server: the client reports connected itself.
    pc.moveTo('connected');
    expect(peer.state).toBe('connected');
    await until(() => gateway.sent('connection.state').length === 3);
    expect(gateway.sent('connection.state')[2]!.data).toEqual({ connectionId: 'b-to-a', state: 'connected' });

    // An operator's mute applies to the local track.
    gateway.socket.push({
      type: 'settings',
      channelId: 'room',
      connectionId: 'b-to-a',
      settings: { ...noSettings, audioMuted: true },
      version: 2,
    });
    expect(audio.enabled).toBe(false);
    pc.stats = [{ type: 'inbound-rtp', kind: 'audio', bytesReceived: 1200, packetsReceived: 10 }];
    expect(await peer.reportStats()).toMatchObject({ bytesReceived: 1200, packetsReceived: 10 });
    expect(gateway.sent('stats')[0]!.data).toMatchObject({ connectionId: 'b-to-a', stats: { bytesReceived: 1200 } });

    const ended = peer.once('ended');
    pc.moveTo('closed');
    expect((await ended)[0]).toEqual({ reason: 'remote-left' });
    await until(() => gateway.sent('connection.close').length === 1);
    expect(client.connections.has('b-to-a')).toBe(false);
  });

  it('renegotiates both ways; on an offer collision the polite side rolls back, answers, then offers again', async () => {
    const { gateway, client } = await registered();
    const opening = client.openPeer('room', 'a-to-b', { connectionId: 'b-to-a' });
    const pc = FakePeerConnection.last;
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', offer: { type: 'offer', sdp: 'o1' } });
    const peer = await opening;

    // Both offer at once: this (polite) side's offer is rolled back, the other's answered, ours sent again.
    await peer.negotiate();
    expect(pc.signalingState).toBe('have-local-offer');
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', offer: { type: 'offer', sdp: 'o2' } });
    await until(() => afterJoin(gateway).filter((type) => type === 'connection.relay:offer').length === 2);
    expect(afterJoin(gateway).slice(3)).toEqual([
      'connection.relay:answer',
      'connection.relay:offer',
      'connection.relay:answer',
      'connection.relay:offer',
    ]);
    expect(pc.remoteDescriptions.at(-1)).toEqual({ type: 'offer', sdp: 'o2' });
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', answer: { type: 'answer', sdp: 'a3' } });
    await until(() => pc.signalingState === 'stable');
    expect(pc.remoteDescriptions.at(-1)).toEqual({ type: 'answer', sdp: 'a3' });
  });

  it('keeps its own offer on a collision when it is the impolite (first offering) side', async () => {
    const { gateway, client } = await registered();
    const opening = client.openPeer('room', 'b-to-a', { connectionId: 'a-to-b' });
    const pc = FakePeerConnection.last;
    await until(() => gateway.sent('connection.relay').length === 1);
    relayed(gateway, { connectionId: 'a-to-b', remoteConnectionId: 'b-to-a', offer: { type: 'offer', sdp: 'theirs' } });
    relayed(gateway, { connectionId: 'a-to-b', remoteConnectionId: 'b-to-a', answer: { type: 'answer', sdp: 'ok' } });
    await opening;
    expect(pc.remoteDescriptions).toEqual([{ type: 'answer', sdp: 'ok' }]);
    expect(gateway.sent('connection.relay').map((frame) => Object.keys(frame.data!))).toEqual([
      ['connectionId', 'offer'],
    ]);
  });

  it('opens the data channel it wants from the answering side when the offer had none (then offers)', async () => {
    const { gateway, client } = await registered();
    const opening = client.openPeer('room', 'a-to-b', { connectionId: 'b-to-a', data: 'chat' });
    const pc = FakePeerConnection.last;
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', offer: { type: 'offer', sdp: 'o1' } });
    const peer = await opening;
    await until(() => afterJoin(gateway).includes('connection.relay:offer'));
    expect(pc.dataChannels).toEqual(['chat']);
    expect(peer.dataChannel).toMatchObject({ label: 'chat' });
    expect(afterJoin(gateway).slice(3)).toEqual(['connection.relay:answer', 'connection.relay:offer']);
  });

  it('rejects with the refusal of its first signal and closes the connection at the server', async () => {
    const { gateway, client } = await registered();
    gateway.handlers['connection.relay'] = () => ({
      error: { code: 'ValidationFailed', message: 'Connection a-to-b does not name b-to-a back.' },
    });
    const opening = client.openPeer('room', 'a-to-b', { connectionId: 'b-to-a' });
    relayed(gateway, { connectionId: 'b-to-a', remoteConnectionId: 'a-to-b', offer: { type: 'offer', sdp: 'o1' } });
    await expect(opening).rejects.toMatchObject({ code: 'ValidationFailed', requestType: 'connection.relay' });
    await until(() => gateway.sent('connection.close').length === 1);
    expect(client.connections.size).toBe(0);
  });

  it('gives up when the other side does not answer within waitMs, closing the connection at the server', async () => {
    const { gateway, client } = await registered();
    const opening = client.openPeer('room', 'b-to-a', { connectionId: 'a-to-b', waitMs: 50 });
    await expect(opening).rejects.toMatchObject({ code: 'RequestTimeout' });
    expect(gateway.sent('connection.close')[0]!.data).toEqual({ connectionId: 'a-to-b' });
    expect(FakePeerConnection.last.closed).toBe(true);
    expect(client.connections.size).toBe(0);
  });
});
