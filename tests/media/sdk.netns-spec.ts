/**
 * The client SDK (`@switchboard/client`) in Node against the real stack: `ws` for the socket,
 * werift for the PeerConnections, Janus behind the gateway. One SDK client publishes synthetic
 * Opus and VP8 RTP, another subscribes and receives it; an operator's mute reaches the publisher's
 * track. Run in the media network namespace (media-netns.mjs).
 */
import { randomInt } from 'node:crypto';
import { WebSocket } from 'ws';
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket } from 'werift';
import { Client, UpstreamConnection, type DownstreamConnection, type RemoteUpstream } from '@switchboard/client';
import { serviceTestEnv, spawnService, waitFor } from '@switchboard/testing';
import { MediaSessionStack } from '../../tools/testing/media-session-stack.js';
import { opusToneFrames } from '../../tools/testing/media-opus.js';
import { AUDIO_PT, countRtp, sendRtp, VIDEO_PT, weriftConfig } from '../../tools/testing/sdk-werift.js';

const CHANNEL = 'sdk-call';
const MIX_CHANNEL = 'sdk-mix';

const VP8_KEY_FRAME = Buffer.concat([
  Buffer.from([0x10, 0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01]),
  Buffer.alloc(600, 0x5a),
]);
const OPUS_FRAME = Buffer.concat([Buffer.from([0xfc]), Buffer.alloc(60, 0x11)]);

/** A real Opus tone (AudioBridge decodes what it mixes), one frame every 20 ms. */
function sendOpus(track: MediaStreamTrack) {
  const frames = opusToneFrames();
  let index = 0;
  let sequenceNumber = randomInt(0, 0xffff);
  let timestamp = randomInt(0, 0x7fffffff);
  const timer = setInterval(() => {
    const header = new RtpHeader({ payloadType: AUDIO_PT, sequenceNumber, timestamp, marker: false });
    sequenceNumber = (sequenceNumber + 1) & 0xffff;
    timestamp = (timestamp + 960) >>> 0;
    track.writeRtp(new RtpPacket(header, frames[index++ % frames.length]!));
  }, 20);
  timer.unref();
  return timer;
}

/** A `ws` class keeping its sockets, so that a test can cut one as a network failure would. */
function trackedWebSocket(sockets: WebSocket[]) {
  return class extends WebSocket {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  };
}

describe('@switchboard/client in Node (ws + werift) against the real stack', () => {
  const stack = new MediaSessionStack();
  const clients: Client[] = [];
  const timers: NodeJS.Timeout[] = [];
  const errors: string[] = [];

  const socketsOf = new Map<Client, WebSocket[]>();
  const sdkClient = async (userId: string, options: { autoSubscribe?: boolean } = {}, channelId = CHANNEL) => {
    const sockets: WebSocket[] = [];
    const client = new Client({
      url: `${stack.gateway.url!.replace('http', 'ws')}/sync`,
      WebSocket: trackedWebSocket(sockets),
      RTCPeerConnection,
      peerConnectionConfig: weriftConfig,
      getToken: () => stack.token(userId, channelId),
      requestTimeoutMs: 30000,
      statsIntervalMs: 1000,
      ...options,
    });
    clients.push(client);
    socketsOf.set(client, sockets);
    client.on('error', (error) => errors.push(`${userId}: ${error.message}`));
    await client.register();
    return client;
  };

  beforeAll(async () => {
    await stack.start();
  }, 60000);

  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    for (const client of clients) client.close();
    await stack.stop();
  });

  it('publishes with one client and receives the RTP with another, states from Janus, stats reported', async () => {
    const alice = await sdkClient('alice');
    const bob = await sdkClient('bob');
    await alice.join(CHANNEL);
    await bob.join(CHANNEL);

    const audio = new MediaStreamTrack({ kind: 'audio' });
    const video = new MediaStreamTrack({ kind: 'video' });
    const upstream = await alice.publish(CHANNEL, { audio, video, data: true, connectionId: 'alice-up' });
    timers.push(sendRtp(audio, AUDIO_PT, 960, OPUS_FRAME, 20), sendRtp(video, VIDEO_PT, 4500, VP8_KEY_FRAME, 50));
    await waitFor(() => upstream.peerConnection.connectionState === 'connected', {
      timeoutMs: 15000,
      description: "alice's PeerConnection up",
    });

    const downstream = await bob.subscribe(CHANNEL, 'alice-up', { connectionId: 'bob-from-alice' });
    const received = countRtp(downstream);
    await waitFor(() => received.audio > 10 && received.video > 5, {
      timeoutMs: 15000,
      description: "alice's RTP at bob",
    });
    // getStats summed and taken by the gateway (a refused `stats` request would resolve undefined).
    const stats = await downstream.reportStats();
    expect(stats?.bytesReceived).toBeGreaterThan(0);
    expect(stats?.packetsReceived).toBeGreaterThan(0);
    expect((await upstream.reportStats())?.bytesSent).toBeGreaterThan(0);
    expect(errors).toEqual([]);

    // `connected` comes from Janus (webrtcup), pushed as connection.state.
    for (const connection of [upstream, downstream])
      await waitFor(() => connection.state === 'connected', {
        timeoutMs: 10000,
        description: `the connected push of ${connection.connectionId}`,
      });
  }, 90000);

  it('resumes the session after its socket is cut: connections kept, media still flowing', async () => {
    const bob = clients[1]!;
    const downstream = bob.connections.get('bob-from-alice') as DownstreamConnection;
    const received = countRtp(downstream);
    const reconnected = bob.once('reconnected');
    socketsOf.get(bob)!.at(-1)!.terminate();
    expect((await reconnected)[0]).toEqual({ resumed: true, droppedPushes: 0 });
    expect(bob.session).toMatchObject({ resumed: true, clientId: 'bob-client' });
    expect(bob.session!.connections.map((connection) => connection.connectionId)).toEqual(['bob-from-alice']);
    expect(bob.connections.get('bob-from-alice')).toBe(downstream);
    const before = received.video;
    await waitFor(() => received.video > before + 5, { timeoutMs: 10000, description: 'video after the resume' });
    expect(await bob.sendMessage(CHANNEL, 'back')).toEqual({ delivered: expect.any(Number) });
  }, 30000);

  it("applies an operator's mute to the publisher's track and refuses its unmute while disabled", async () => {
    const alice = clients[0]!;
    const upstream = alice.connections.get('alice-up') as UpstreamConnection;
    const muted = upstream.once('mute');
    await stack.a('PATCH', `/applications/${stack.applicationId}/channels/${CHANNEL}`, {
      audioMuted: true,
      audioUnmuteDisabled: true,
    });
    expect((await muted)[0]).toEqual({ kind: 'audio', muted: true, byServer: true, unmuteDisabled: true });
    expect(upstream.tracks.audio!.enabled).toBe(false);
    await expect(upstream.setAudioMuted(false)).rejects.toMatchObject({ code: 'UnmuteDisabled' });

    const unmuted = upstream.once('mute');
    await stack.a('PATCH', `/applications/${stack.applicationId}/channels/${CHANNEL}`, {
      audioMuted: false,
      audioUnmuteDisabled: false,
    });
    expect((await unmuted)[0]).toEqual({ kind: 'audio', muted: false, byServer: true, unmuteDisabled: false });
    expect(upstream.tracks.audio!.enabled).toBe(true);
  }, 30000);

  it('subscribes by itself to the upstreams of its channels (autoSubscribe): at join, when opened, until closed', async () => {
    const bob = clients[1]!;
    const bobSaw: string[] = [];
    bob.on('upstream.opened', (push) => bobSaw.push(`opened ${push.upstream.connectionId}`));
    bob.on('upstream.closed', (push) => bobSaw.push(`closed ${push.connectionId}`));

    const carol = await sdkClient('carol', { autoSubscribe: true });
    const opened: DownstreamConnection[] = [];
    carol.on('connection', (connection) => opened.push(connection as DownstreamConnection));
    const joined = await carol.join(CHANNEL);
    expect(joined.upstreams.map((upstream: RemoteUpstream) => upstream.connectionId)).toEqual(['alice-up']);
    await waitFor(() => opened.length === 1, { timeoutMs: 15000, description: "carol's downstream of alice" });
    const fromAlice = countRtp(opened[0]!);
    await waitFor(() => fromAlice.video > 5, { timeoutMs: 15000, description: "alice's video at carol" });

    // A later publisher: announced to the channel once Janus has it up, received by carol at once.
    const frank = await sdkClient('frank');
    await frank.join(CHANNEL);
    const video = new MediaStreamTrack({ kind: 'video' });
    const frankUp = await frank.publish(CHANNEL, { video, connectionId: 'frank-up' });
    timers.push(sendRtp(video, VIDEO_PT, 4500, VP8_KEY_FRAME, 50));
    await waitFor(() => opened.length === 2, { timeoutMs: 15000, description: "carol's downstream of frank" });
    expect(opened[1]!.remote).toMatchObject({ connectionId: 'frank-up', userId: 'frank', audio: false, video: true });
    const fromFrank = countRtp(opened[1]!);
    await waitFor(() => fromFrank.video > 5, { timeoutMs: 15000, description: "frank's video at carol" });

    // Frank stops publishing: carol's downstream ends (remote-left), bob hears the upstream closed.
    const ended = opened[1]!.once('ended');
    await frankUp.close();
    expect(await ended).toEqual([{ reason: 'remote-left' }]);
    await waitFor(() => bobSaw.includes('closed frank-up'), {
      timeoutMs: 10000,
      description: 'upstream.closed at bob',
    });
    expect(bobSaw).toEqual(['opened frank-up', 'closed frank-up']);
  }, 90000);

  it('joins the audio mix (mcu) with two clients, each receiving the mix', async () => {
    const mixers = [];
    for (const user of ['dave', 'erin']) {
      const client = await sdkClient(user, {}, MIX_CHANNEL);
      await client.join(MIX_CHANNEL);
      const audio = new MediaStreamTrack({ kind: 'audio' });
      const mixer = await client.joinMixer(MIX_CHANNEL, { audio, connectionId: `${user}-mix` });
      timers.push(sendOpus(audio));
      mixers.push(mixer);
    }
    const received = mixers.map((mixer) => countRtp(mixer));
    await waitFor(() => received.every((counts) => counts.audio > 20), {
      timeoutMs: 15000,
      description: 'the mix at both participants',
    });
    expect(mixers.map((mixer) => mixer.mediaServerId)).toEqual([stack.media.mediaServerId, stack.media.mediaServerId]);
  }, 60000);
  it('restores the sessions after the gateway restarted: joined again, published again, received again', async () => {
    const [alice, bob] = [clients[0]!, clients[1]!];
    const restored = alice.once('connection');
    const bobBack = bob.once('reconnected');
    const port = new URL(stack.gateway.url!).port;
    await stack.gateway.stop();
    stack.gateway = await spawnService('admin-gateway', {
      ...serviceTestEnv(stack.namespace, stack.db.url),
      HTTP_PORT: port,
    });
    const [upstream] = await restored;
    expect((await bobBack)[0]).toMatchObject({ resumed: false });
    expect(alice.session).toMatchObject({ resumed: false, clientId: 'alice-client' });
    expect(upstream).toBeInstanceOf(UpstreamConnection);
    expect(alice.channels.has(CHANNEL)).toBe(true);
    await waitFor(() => upstream.state === 'connected', { timeoutMs: 15000, description: "alice's new upstream" });

    // bob (no autoSubscribe) had its downstream ended by the restart; it receives the new upstream.
    await waitFor(() => bob.channels.has(CHANNEL), { timeoutMs: 10000, description: 'bob joined again' });
    const downstream = await bob.subscribe(CHANNEL, upstream.connectionId);
    const received = countRtp(downstream);
    await waitFor(() => received.audio > 10 && received.video > 5, {
      timeoutMs: 15000,
      description: "alice's RTP at bob after the restart",
    });
  }, 90000);
});
