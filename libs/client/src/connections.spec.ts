import { Client, type ClientOptions } from './client.js';
import { DownstreamConnection } from './connections.js';
import { SyncError } from './errors.js';
import { FakeGateway, FakePeerConnection, FakeTrack, noSettings, tokenExpiringAt, until } from './fakes.testing.js';
import type { PeerConnectionConstructor } from './platform.js';

async function registered(options: Partial<ClientOptions> = {}) {
  const gateway = new FakeGateway();
  const client = new Client({
    url: 'ws://gateway/sync',
    WebSocket: gateway.WebSocket,
    RTCPeerConnection: FakePeerConnection as unknown as PeerConnectionConstructor,
    statsIntervalMs: 0,
    ...options,
  });
  await client.register(tokenExpiringAt(Math.floor(Date.now() / 1000) + 3600));
  await client.join('room');
  return { gateway, client };
}

const typesAfterJoin = (gateway: FakeGateway) =>
  gateway.requests.slice(2).map((frame) => [frame.type, frame.data?.state].filter(Boolean).join(':'));

afterEach(() => {
  FakePeerConnection.instances.length = 0;
});

describe('UpstreamConnection (publish)', () => {
  it('opens, offers and applies the answer; candidates trickle after the offer, the last one completed', async () => {
    const { gateway, client } = await registered({ peerConnectionConfig: { iceUseIpv6: false } });
    const audio = new FakeTrack('audio');
    const video = new FakeTrack('video');
    const publishing = client.publish('room', { audio, video, data: true, connectionId: 'up-1' });
    const pc = FakePeerConnection.last;
    pc.gather('candidate:1 1 udp 1 10.0.0.1 5000 typ host'); // before the offer went: held back
    const upstream = await publishing;
    expect(pc.configuration).toEqual({ iceServers: [], iceUseIpv6: false });
    expect(pc.transceivers).toEqual([
      { track: audio, direction: 'sendonly' },
      { track: video, direction: 'sendonly' },
    ]);
    expect(gateway.sent('connection.open')[0]!.data).toEqual({
      channelId: 'room',
      connectionId: 'up-1',
      type: 'sfu',
      tag: null,
      streams: {
        audio: { direction: 'sendonly', muted: false },
        video: { direction: 'sendonly', muted: false },
        data: { direction: 'sendrecv' },
      },
    });
    expect(gateway.sent('connection.offer')[0]!.data).toEqual({
      connectionId: 'up-1',
      offer: { type: 'offer', sdp: 'local-offer-1' },
    });
    expect(pc.remoteDescriptions).toEqual([{ type: 'answer', sdp: 'answer-to-up-1' }]);
    expect(upstream.mediaServerId).toBe('media-1');
    pc.gather('candidate:2 1 udp 1 10.0.0.1 5001 typ host');
    pc.finishGathering();
    await until(() => gateway.sent('connection.candidates').some((frame) => frame.data!.completed));
    expect(typesAfterJoin(gateway)).toEqual([
      'connection.open',
      'connection.state:initializing',
      'connection.state:connecting',
      'connection.offer',
      'connection.candidates',
    ]);
    expect(gateway.sent('connection.candidates')[0]!.data).toEqual({
      connectionId: 'up-1',
      completed: true,
      candidates: [
        {
          candidate: 'candidate:1 1 udp 1 10.0.0.1 5000 typ host',
          sdpMid: '0',
          sdpMLineIndex: 0,
          usernameFragment: null,
        },
        {
          candidate: 'candidate:2 1 udp 1 10.0.0.1 5001 typ host',
          sdpMid: '0',
          sdpMLineIndex: 0,
          usernameFragment: null,
        },
      ],
    });
  });

  it('sends every candidate in the offer when trickle ICE is off', async () => {
    const { gateway, client } = await registered({ trickleIce: false });
    const publishing = client.publish('room', { audio: new FakeTrack('audio') });
    await until(() => FakePeerConnection.last.iceGatheringState === 'gathering');
    expect(gateway.sent('connection.offer')).toHaveLength(0);
    FakePeerConnection.last.finishGathering();
    await publishing;
    expect(gateway.sent('connection.offer')).toHaveLength(1);
    expect(gateway.sent('connection.candidates')).toHaveLength(0);
  });

  it('follows the media server: connection.state pushes, then connection.ended closes the PeerConnection', async () => {
    const { gateway, client } = await registered();
    const upstream = await client.publish('room', { audio: new FakeTrack('audio'), connectionId: 'up-1' });
    const states: string[] = [];
    upstream.on('state', (state) => states.push(state));
    gateway.socket.push({ type: 'connection.state', channelId: 'room', connectionId: 'up-1', state: 'connected' });
    const ended = upstream.once('ended');
    gateway.socket.push({ type: 'connection.ended', channelId: 'room', connectionId: 'up-1', reason: 'failed' });
    expect(await ended).toEqual([{ reason: 'failed' }]);
    expect(states).toEqual(['connected', 'failed']);
    expect(FakePeerConnection.last.closed).toBe(true);
    expect(client.connections.has('up-1')).toBe(false);
  });

  it('fails the publish with the SyncError of a refused open, and forgets the connection', async () => {
    const { gateway, client } = await registered();
    gateway.handlers['connection.open'] = () => ({ error: { code: 'Forbidden', message: 'disableSfu' } });
    gateway.handlers['connection.state'] = () => ({ error: { code: 'UnknownConnection', message: 'no such' } });
    gateway.handlers['connection.offer'] = () => ({ error: { code: 'UnknownConnection', message: 'no such' } });
    const refused = await client.publish('room', { audio: new FakeTrack('audio') }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SyncError);
    expect(refused).toMatchObject({ code: 'Forbidden', requestType: 'connection.open' });
    expect(client.connections.size).toBe(0);
    expect(FakePeerConnection.last.closed).toBe(true);
  });

  it('closes at the server a connection opened but not signalled (the media server refused the offer)', async () => {
    const { gateway, client } = await registered();
    gateway.handlers['connection.offer'] = () => ({ error: { code: 'Internal', message: 'Janus refused the SDP' } });
    const publishing = client.publish('room', { audio: new FakeTrack('audio'), connectionId: 'up-1' });
    await expect(publishing).rejects.toMatchObject({ code: 'Internal', requestType: 'connection.offer' });
    expect(gateway.sent('connection.close').map((frame) => frame.data)).toEqual([{ connectionId: 'up-1' }]);
    expect(client.connections.size).toBe(0);
  });
});

describe('server mute', () => {
  it('applies an operator mute to the local track, refuses a local unmute while disabled, and follows the unmute', async () => {
    const { gateway, client } = await registered();
    const audio = new FakeTrack('audio');
    const video = new FakeTrack('video');
    const upstream = await client.publish('room', { audio, video, connectionId: 'up-1' });
    const mutes: unknown[] = [];
    upstream.on('mute', (change) => mutes.push(change));
    const settings = { ...noSettings, audioMuted: true, audioUnmuteDisabled: true };
    gateway.socket.push({ type: 'settings', channelId: 'room', connectionId: 'up-1', settings, version: 2 });
    expect(audio.enabled).toBe(false);
    expect(video.enabled).toBe(true);
    expect(mutes).toEqual([{ kind: 'audio', muted: true, byServer: true, unmuteDisabled: true }]);

    const refused = await upstream.setAudioMuted(false).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'UnmuteDisabled', details: [{ field: 'localAudioMuted' }] });
    expect(gateway.sent('connection.update')).toHaveLength(0);
    expect(audio.enabled).toBe(false);

    await upstream.setVideoMuted(true);
    expect(video.enabled).toBe(false);
    expect(gateway.sent('connection.update')[0]!.data).toEqual({ connectionId: 'up-1', localVideoMuted: true });

    gateway.socket.push({
      type: 'settings',
      channelId: 'room',
      connectionId: 'up-1',
      settings: noSettings,
      version: 3,
    });
    expect(audio.enabled).toBe(true);
    expect(mutes.at(-1)).toEqual({ kind: 'audio', muted: false, byServer: true, unmuteDisabled: false });
  });

  it('takes a settings push that arrived before the open answer over the answer', async () => {
    const { gateway, client } = await registered();
    const audio = new FakeTrack('audio');
    gateway.handlers['connection.open'] = (data, socket) => {
      const settings = { ...noSettings, audioMuted: true };
      socket.push({ type: 'settings', channelId: 'room', connectionId: String(data.connectionId), settings });
      const result = { ...data, state: 'new', mediaServerId: 'media-1', settings: noSettings };
      return { result };
    };
    const upstream = await client.publish('room', { audio, connectionId: 'up-1' });
    expect(upstream.settings?.audioMuted).toBe(true);
    expect(audio.enabled).toBe(false);
  });
});

describe('DownstreamConnection (subscribe)', () => {
  it('subscribes, answers the media server offer, and answers its renegotiation', async () => {
    const { gateway, client } = await registered();
    const remote = { connectionId: 'up-9', audio: true, video: true, data: false };
    const downstream = await client.subscribe('room', remote as never, { connectionId: 'down-1' });
    const pc = FakePeerConnection.last;
    expect(gateway.sent('connection.open')[0]!.data).toMatchObject({
      connectionId: 'down-1',
      type: 'sfu',
      remoteConnectionId: 'up-9',
      streams: { audio: { direction: 'recvonly' }, video: { direction: 'recvonly' }, data: null },
    });
    expect(pc.remoteDescriptions[0]).toEqual({ type: 'offer', sdp: 'offer-of-down-1 m=application' });
    expect(pc.dataChannels).toEqual(['switchboard']);
    expect(gateway.sent('connection.answer')[0]!.data).toEqual({
      connectionId: 'down-1',
      answer: { type: 'answer', sdp: 'local-answer-to-offer-of-down-1 m=application' },
    });

    const offer = { type: 'offer' as const, sdp: 'renegotiated-offer' };
    gateway.socket.push({ type: 'connection.offer', channelId: 'room', connectionId: 'down-1', offer });
    await until(() => gateway.sent('connection.answer').length === 2);
    expect(pc.remoteDescriptions.at(-1)).toEqual(offer);
    expect(gateway.sent('connection.answer')[1]!.data).toEqual({
      connectionId: 'down-1',
      answer: { type: 'answer', sdp: 'local-answer-to-renegotiated-offer' },
    });
    expect(downstream.ended).toBe(false);
  });

  it('opens a downstream connection for each remote upstream with autoSubscribe, not for its own', async () => {
    const { gateway, client } = await registered({ autoSubscribe: true });
    const opened: DownstreamConnection[] = [];
    client.on('connection', (connection) => opened.push(connection as DownstreamConnection));
    const upstream = (connectionId: string, clientId: string) => ({
      connectionId,
      clientId,
      userId: 'u',
      userAlias: null,
      deviceId: 'd',
      deviceAlias: null,
      clientTag: null,
      audio: true,
      video: false,
      data: false,
    });
    gateway.socket.push({ type: 'upstream.opened', channelId: 'room', upstream: upstream('mine', 'client') });
    gateway.socket.push({ type: 'upstream.opened', channelId: 'room', upstream: upstream('theirs', 'other') });
    await until(() => opened.length === 1);
    expect(opened[0]!.remote.connectionId).toBe('theirs');
    expect(gateway.sent('connection.open').map((frame) => frame.data!.remoteConnectionId)).toEqual(['theirs']);
    expect(gateway.sent('connection.open')[0]!.data!.streams).toEqual({
      audio: { direction: 'recvonly' },
      video: null,
      data: null,
    });
  });

  it('ends the channel connections on a kick out of the channel', async () => {
    const { gateway, client } = await registered();
    const downstream = await client.subscribe('room', 'up-9');
    const ended = downstream.once('ended');
    gateway.socket.push({ type: 'kicked', channelId: 'room' });
    expect(await ended).toEqual([{ reason: 'kicked' }]);
    expect(client.channels.has('room')).toBe(false);
  });
});

describe('stats', () => {
  it('reports getStats totals, jitter, round trip and frame size with the stats request', async () => {
    const { gateway, client } = await registered();
    const upstream = await client.publish('room', { video: new FakeTrack('video'), connectionId: 'up-1' });
    FakePeerConnection.last.stats = [
      { type: 'outbound-rtp', kind: 'video', bytesSent: 5000, packetsSent: 10, frameWidth: 640, frameHeight: 480 },
      { type: 'outbound-rtp', kind: 'audio', bytesSent: 1000, packetsSent: 50 },
      { type: 'inbound-rtp', kind: 'audio', bytesReceived: 300, packetsReceived: 3, packetsLost: 1, jitter: 0.02 },
      { type: 'remote-inbound-rtp', kind: 'video', roundTripTime: 0.05 },
      { type: 'candidate-pair', nominated: true, currentRoundTripTime: 0.04 },
    ];
    await upstream.reportStats();
    expect(gateway.sent('stats')[0]!.data).toEqual({
      connectionId: 'up-1',
      stats: {
        bytesSent: 6000,
        bytesReceived: 300,
        packetsSent: 60,
        packetsReceived: 3,
        packetsLost: 1,
        jitter: 0.02,
        roundTripTime: 0.05,
        frameWidth: 640,
        frameHeight: 480,
      },
    });
  });

  it('reports at the interval while the connection is open', async () => {
    const { gateway, client } = await registered({ statsIntervalMs: 20 });
    const upstream = await client.publish('room', { audio: new FakeTrack('audio') });
    await until(() => gateway.sent('stats').length >= 2);
    await upstream.close();
    const reported = gateway.sent('stats').length;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(gateway.sent('stats').length).toBe(reported);
    expect(gateway.sent('stats')[1]!.data!.stats).toMatchObject({ sendBitrate: 0, receiveBitrate: 0 });
  });
});
