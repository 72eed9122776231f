/**
 * `peer` connections through the client SDK in Node (ws + werift): two SDK clients open a peer
 * connection each, naming the other; the SDK relays offer, answer and candidates through the
 * gateway (`connection.relay` → `connection.relayed`) and the RTP and a data channel message flow
 * between the two clients directly. Run in the media network namespace (media-netns.mjs).
 */
import { WebSocket } from 'ws';
import { MediaStreamTrack, RTCPeerConnection } from 'werift';
import { Client, type PeerConnection } from '@switchboard/client';
import { waitFor } from '@switchboard/testing';
import { MediaSessionStack } from '../../tools/testing/media-session-stack.js';
import { AUDIO_PT, countRtp, sendRtp, VIDEO_PT, weriftConfig } from '../../tools/testing/sdk-werift.js';

const CHANNEL = 'sdk-p2p';
// Synthetic payloads: the other peer takes the RTP without decoding it.
const PAYLOAD = Buffer.alloc(160, 0x5a);

describe('@switchboard/client peer connections in Node (ws + werift) through the real gateway', () => {
  const stack = new MediaSessionStack();
  const clients: Client[] = [];
  const timers: NodeJS.Timeout[] = [];
  const errors: string[] = [];

  const sdkClient = async (userId: string) => {
    const client = new Client({
      url: `${stack.gateway.url!.replace('http', 'ws')}/sync`,
      WebSocket,
      RTCPeerConnection,
      peerConnectionConfig: weriftConfig,
      getToken: () => stack.token(userId, CHANNEL),
      requestTimeoutMs: 30000,
      statsIntervalMs: 0,
    });
    clients.push(client);
    client.on('error', (error) => errors.push(`${userId}: ${error.message}`));
    await client.register();
    await client.join(CHANNEL);
    return client;
  };

  const clientPath = (userId: string) =>
    `/applications/${stack.applicationId}/channels/${CHANNEL}/users/${userId}/devices/${userId}-device/clients/${userId}-client`;
  /** The client's connections interface A lists (the registry's view). */
  const peerConnectionsOf = async (userId: string) =>
    ((await stack.a('GET', `${clientPath(userId)}/connections`)) as Array<{ id: string }>).map((c) => c.id);

  beforeAll(async () => {
    await stack.start();
  }, 60000);

  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    for (const client of clients) client.close();
    await stack.stop();
  });

  it('opens a peer connection on each side: media both ways and a data channel message, peer to peer', async () => {
    const alice = await sdkClient('alice');
    const bob = await sdkClient('bob');
    const aliceAudio = new MediaStreamTrack({ kind: 'audio' });
    const aliceVideo = new MediaStreamTrack({ kind: 'video' });
    const bobAudio = new MediaStreamTrack({ kind: 'audio' });
    // Alice opens first and offers (her id sorts first); Bob opens a moment later: her offer waits for him.
    const aliceOpening = alice.openPeer(CHANNEL, 'bob-to-alice', {
      connectionId: 'alice-to-bob',
      audio: aliceAudio,
      video: aliceVideo,
      data: true,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [alicePeer, bobPeer] = await Promise.all([
      aliceOpening,
      bob.openPeer(CHANNEL, 'alice-to-bob', { connectionId: 'bob-to-alice', audio: bobAudio, data: true }),
    ]);
    expect([alicePeer.offerer, bobPeer.offerer]).toEqual([true, false]);
    expect(alicePeer.mediaServerId).toBeNull();
    const atBob = countRtp(bobPeer);
    const atAlice = countRtp(alicePeer);
    timers.push(
      sendRtp(aliceAudio, AUDIO_PT, 960, PAYLOAD, 20),
      sendRtp(aliceVideo, VIDEO_PT, 4500, PAYLOAD, 50),
      sendRtp(bobAudio, AUDIO_PT, 960, PAYLOAD, 20),
    );
    await waitFor(() => atBob.audio > 10 && atBob.video > 5 && atAlice.audio > 10, {
      timeoutMs: 15000,
      description: "alice's audio and video at bob, bob's audio at alice",
    });

    // The data channel Alice opened reaches Bob's side.
    const readyState = (peer: PeerConnection) => (peer.dataChannel as { readyState?: string } | undefined)?.readyState;
    await waitFor(() => readyState(bobPeer) === 'open' && readyState(alicePeer) === 'open', {
      timeoutMs: 10000,
      description: 'the data channel open on both sides',
    });
    const message = new Promise<string>((resolve) =>
      (
        bobPeer.dataChannel as unknown as { onMessage: { subscribe(listener: (data: unknown) => void): void } }
      ).onMessage.subscribe((data) => resolve(String(data))),
    );
    alicePeer.dataChannel!.send('hello bob');
    expect(await message).toBe('hello bob');

    // No media server: each SDK reports `connected` itself, and the gateway takes its stats.
    for (const peer of [alicePeer, bobPeer])
      await waitFor(() => peer.state === 'connected', { timeoutMs: 10000, description: `${peer.connectionId} up` });
    expect((await bobPeer.reportStats())?.bytesReceived).toBeGreaterThan(0);
    expect((await alicePeer.reportStats())?.bytesSent).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  }, 60000);

  it('renegotiates from the answering side: a video track Bob adds reaches Alice', async () => {
    const [alice, bob] = clients as [Client, Client];
    const alicePeer = alice.connections.get('alice-to-bob') as PeerConnection;
    const bobPeer = bob.connections.get('bob-to-alice') as PeerConnection;
    const atAlice = countRtp(alicePeer);
    const bobVideo = new MediaStreamTrack({ kind: 'video' });
    (bobPeer.peerConnection.addTrack as (track: MediaStreamTrack) => unknown)(bobVideo);
    await bobPeer.negotiate();
    timers.push(sendRtp(bobVideo, VIDEO_PT, 4500, PAYLOAD, 50));
    await waitFor(() => atAlice.video > 5, { timeoutMs: 15000, description: "bob's video at alice" });
    expect(errors).toEqual([]);
  }, 30000);

  it('closes: the server closes the other side too and tells it (remote-left), well before ICE would notice', async () => {
    const [alice, bob] = clients as [Client, Client];
    const bobPeer = bob.connections.get('bob-to-alice') as PeerConnection;
    const ended = bobPeer.once('ended');
    const closedAt = Date.now();
    await alice.connections.get('alice-to-bob')!.close();
    expect(alice.connections.size).toBe(0);
    expect((await ended)[0]).toEqual({ reason: 'remote-left' });
    expect(Date.now() - closedAt).toBeLessThan(5000);
    expect(bob.connections.size).toBe(0);
    expect(await peerConnectionsOf('bob')).toEqual([]);
  }, 30000);

  it('a kick of one side through interface A ends the other side as remote-kicked', async () => {
    const [alice, bob] = clients as [Client, Client];
    const [alicePeer, bobPeer] = await Promise.all([
      alice.openPeer(CHANNEL, 'bob-2', { connectionId: 'alice-2', data: true }),
      bob.openPeer(CHANNEL, 'alice-2', { connectionId: 'bob-2', data: true }),
    ]);
    const aliceEnded = alicePeer.once('ended');
    const bobEnded = bobPeer.once('ended');
    await stack.a('DELETE', `${clientPath('alice')}/connections/alice-2`);
    expect((await aliceEnded)[0]).toEqual({ reason: 'kicked' });
    expect((await bobEnded)[0]).toEqual({ reason: 'remote-kicked' });
    expect(await peerConnectionsOf('bob')).toEqual([]);
  }, 30000);
});
