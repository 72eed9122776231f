/// <reference lib="dom" />
/**
 * What a page does in the Chromium media test, run inside the page (`page.evaluate`): a minimal
 * `/sync` client that registers, joins, publishes the fake camera and microphone on an upstream
 * sfu connection and receives a remote upstream on a downstream one. The client SDK (issue 23)
 * will do this for apps; this is only enough for the test.
 */

export interface BrowserCallOptions {
  syncUrl: string;
  token: string;
  channelId: string;
  upstreamId: string;
}

interface PageWindow {
  call?: {
    request(type: string, data?: unknown): Promise<Record<string, unknown>>;
    peers: RTCPeerConnection[];
  };
}

/** Registers, joins and publishes; resolves once the media server answered the offer. */
export async function publishInPage(options: BrowserCallOptions): Promise<void> {
  const socket = new WebSocket(options.syncUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error('the /sync socket did not open'));
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (data: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  socket.onmessage = (message) => {
    const frame = JSON.parse(String(message.data)) as {
      type: string;
      id?: number;
      data?: Record<string, unknown>;
      error?: { code: string; message: string };
    };
    const entry = frame.id === undefined ? undefined : waiting.get(frame.id);
    if (!entry) return;
    waiting.delete(frame.id!);
    if (frame.type === 'result') entry.resolve(frame.data ?? {});
    else entry.reject(new Error(`${frame.error?.code}: ${frame.error?.message}`));
  };
  const request = (type: string, data?: unknown) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, type, data }));
    });
  const gathered = (pc: RTCPeerConnection) =>
    new Promise<void>((resolve) => {
      if (pc.iceGatheringState === 'complete') return resolve();
      pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
    });
  const registered = await request('register', { token: options.token });
  await request('join', { channelId: options.channelId });
  const pc = new RTCPeerConnection({ iceServers: registered.iceServers as RTCIceServer[] });
  (window as PageWindow).call = { request, peers: [pc] };
  await request('connection.open', {
    channelId: options.channelId,
    connectionId: options.upstreamId,
    type: 'sfu',
    streams: { audio: { direction: 'sendonly' }, video: { direction: 'sendonly' } },
  });
  const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
  for (const track of media.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const { answer } = await request('connection.offer', {
    connectionId: options.upstreamId,
    offer: pc.localDescription,
  });
  await pc.setRemoteDescription(answer as RTCSessionDescriptionInit);
}

/** Opens a downstream sfu connection receiving `remoteConnectionId` and answers the media server's offer. */
export async function receiveInPage(options: {
  channelId: string;
  connectionId: string;
  remoteConnectionId: string;
}): Promise<void> {
  const call = (window as PageWindow).call!;
  await call.request('connection.open', {
    channelId: options.channelId,
    connectionId: options.connectionId,
    type: 'sfu',
    remoteConnectionId: options.remoteConnectionId,
    streams: { audio: { direction: 'recvonly' }, video: { direction: 'recvonly' } },
  });
  const pc = new RTCPeerConnection({ iceServers: [] });
  call.peers.push(pc);
  const { offer } = await call.request('connection.subscribe', { connectionId: options.connectionId });
  await pc.setRemoteDescription(offer as RTCSessionDescriptionInit);
  await pc.setLocalDescription(await pc.createAnswer());
  await new Promise<void>((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
  });
  await call.request('connection.answer', { connectionId: options.connectionId, answer: pc.localDescription });
}

/** Video frames decoded so far on the page's receiving connections (`getStats`, inbound-rtp video). */
export async function framesDecodedInPage(): Promise<number> {
  const call = (window as PageWindow).call!;
  let frames = 0;
  for (const pc of call.peers.slice(1)) {
    const report = await pc.getStats();
    report.forEach((stat: { type: string; kind?: string; framesDecoded?: number }) => {
      if (stat.type === 'inbound-rtp' && stat.kind === 'video') frames += stat.framesDecoded ?? 0;
    });
  }
  return frames;
}
