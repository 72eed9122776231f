/**
 * A fake `/sync` gateway (fake WebSockets) and a fake RTCPeerConnection for the SDK's unit tests:
 * the tests drive the protocol's answers, pushes and drops, and the PeerConnection's candidates.
 */
import type { ServerPush, SyncErrorBody, SyncRegisterResult } from '@switchboard/contracts';
import type { MediaTrackLike, PeerConnectionLike, SessionDescriptionInit, WebSocketLike } from './platform.js';

export interface RequestFrame {
  id: number;
  type: string;
  data?: Record<string, unknown>;
}
/** What a handler answers: a result's data, an error, or nothing (the test answers later itself). */
export type Answer = { result: unknown } | { error: SyncErrorBody } | undefined;
type Handler = (data: Record<string, unknown>, socket: FakeSocket) => Answer;

export const registerResult = (fields: Partial<SyncRegisterResult> = {}): SyncRegisterResult => ({
  protocolVersion: 2,
  applicationId: 'app',
  userId: 'user',
  deviceId: 'device',
  clientId: 'client',
  gatewayId: 'gateway',
  resumed: false,
  channels: [],
  connections: [],
  droppedPushes: 0,
  iceServers: [],
  ...fields,
});

export const noSettings = {
  recording: false,
  recordingTag: null,
  audioMuted: false,
  videoMuted: false,
  audioUnmuteDisabled: false,
  videoUnmuteDisabled: false,
};

/** Default answers: enough for a session that registers, joins and signals connections. */
function defaultAnswer(frame: RequestFrame): Answer {
  const data = frame.data ?? {};
  const connectionId = String(data.connectionId);
  switch (frame.type) {
    case 'register':
      return { result: registerResult() };
    case 'join':
      return { result: { channelId: data.channelId, channel: {}, settings: noSettings, claim: {}, upstreams: [] } };
    case 'connection.open':
      return {
        result: {
          connectionId,
          channelId: data.channelId,
          state: 'new',
          mediaServerId: 'media-1',
          settings: noSettings,
        },
      };
    case 'connection.offer':
      return { result: { connectionId, answer: { type: 'answer', sdp: `answer-to-${connectionId}` } } };
    case 'connection.subscribe':
      return { result: { connectionId, offer: { type: 'offer', sdp: `offer-of-${connectionId} m=application` } } };
    case 'connection.state':
      return { result: { connectionId, state: data.state } };
    case 'message':
      return { result: { delivered: 1 } };
    default:
      return { result: data.connectionId === undefined ? {} : { connectionId } };
  }
}

export class FakeGateway {
  readonly sockets: FakeSocket[] = [];
  readonly handlers: Record<string, Handler> = {};
  /** Every request of every socket, in the order received. */
  readonly requests: Array<RequestFrame & { socket: number }> = [];
  readonly WebSocket: new (url: string) => WebSocketLike;

  constructor() {
    this.WebSocket = socketClassOf(this);
  }

  get socket(): FakeSocket {
    return this.sockets.at(-1)!;
  }

  /** Requests of one type (all sockets). */
  sent(type: string): RequestFrame[] {
    return this.requests.filter((frame) => frame.type === type);
  }

  received(socket: FakeSocket, frame: RequestFrame): void {
    this.requests.push({ ...frame, socket: this.sockets.indexOf(socket) });
    const handler = this.handlers[frame.type];
    const answer = handler ? handler(frame.data ?? {}, socket) : defaultAnswer(frame);
    if (answer) queueMicrotask(() => socket.answer(frame.id, answer));
  }
}

const socketClassOf = (gateway: FakeGateway) =>
  class extends FakeSocket {
    constructor(url: string) {
      super(url, gateway);
    }
  };

export class FakeSocket implements WebSocketLike {
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  closedWith?: { code?: number; reason?: string };

  constructor(
    readonly url: string,
    private readonly gateway: FakeGateway,
  ) {
    gateway.sockets.push(this);
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.({});
    });
  }

  send(text: string): void {
    this.gateway.received(this, JSON.parse(text) as RequestFrame);
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.closedWith = { code, reason };
  }

  // ---- the gateway's side ----

  answer(id: number, answer: Answer): void {
    if (!answer || this.readyState !== 1) return;
    const frame = 'result' in answer ? { type: 'result', id, data: answer.result } : { type: 'error', id, ...answer };
    this.onmessage?.({ data: JSON.stringify(frame) });
  }

  push(push: ServerPush): void {
    this.onmessage?.({ data: JSON.stringify({ type: 'push', push }) });
  }

  frame(frame: unknown): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }

  /** The gateway (or the network) closes the socket. */
  drop(code = 1006, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

export class FakeTrack implements MediaTrackLike {
  enabled = true;
  constructor(readonly kind: 'audio' | 'video') {}
}

export class FakePeerConnection implements PeerConnectionLike {
  static readonly instances: FakePeerConnection[] = [];
  localDescription: { type: string; sdp: string } | null = null;
  readonly remoteDescriptions: SessionDescriptionInit[] = [];
  connectionState = 'new';
  iceGatheringState = 'new';
  signalingState = 'stable';
  readonly addedCandidates: unknown[] = [];
  readonly addedTracks: unknown[] = [];
  readonly transceivers: Array<{ track: unknown; direction?: string }> = [];
  readonly dataChannels: string[] = [];
  closed = false;
  stats: Array<Record<string, unknown>> = [];
  onicecandidate: ((event: { candidate: unknown }) => void) | null = null;
  ontrack: ((event: unknown) => void) | null = null;
  ondatachannel: ((event: unknown) => void) | null = null;
  onconnectionstatechange: ((event: unknown) => void) | null = null;
  private offers = 0;

  constructor(readonly configuration: Record<string, unknown>) {
    FakePeerConnection.instances.push(this);
  }

  static get last(): FakePeerConnection {
    return FakePeerConnection.instances.at(-1)!;
  }

  createOffer() {
    return Promise.resolve({ type: 'offer', sdp: `local-offer-${++this.offers}` });
  }
  createAnswer() {
    return Promise.resolve({ type: 'answer', sdp: `local-answer-to-${this.remoteDescriptions.at(-1)?.sdp}` });
  }
  setLocalDescription(description: { type: string; sdp: string }) {
    if (description.type === 'rollback') {
      this.localDescription = null;
      this.signalingState = 'stable';
      return Promise.resolve();
    }
    this.localDescription = description;
    this.signalingState = description.type === 'offer' ? 'have-local-offer' : 'stable';
    this.iceGatheringState = 'gathering';
    return Promise.resolve();
  }
  setRemoteDescription(description: SessionDescriptionInit) {
    this.remoteDescriptions.push(description);
    this.signalingState = description.type === 'offer' ? 'have-remote-offer' : 'stable';
    return Promise.resolve();
  }
  addTrack(track: unknown) {
    this.addedTracks.push(track);
    return {};
  }
  addIceCandidate(candidate: unknown) {
    this.addedCandidates.push(candidate);
    return Promise.resolve();
  }
  addTransceiver(track: unknown, init?: { direction?: string }) {
    this.transceivers.push({ track, direction: init?.direction });
    return {};
  }
  createDataChannel(label: string) {
    this.dataChannels.push(label);
    return { label, send: () => undefined, close: () => undefined };
  }
  getStats() {
    return Promise.resolve(new Map(this.stats.map((stat, index) => [String(index), stat])));
  }
  close() {
    this.closed = true;
  }
  /** The media transport moved (`connected`, `failed`, `closed`). */
  moveTo(state: string): void {
    this.connectionState = state;
    this.onconnectionstatechange?.({});
  }

  // ---- the test's side ----

  gather(...candidates: string[]): void {
    for (const candidate of candidates)
      this.onicecandidate?.({ candidate: { candidate, sdpMid: '0', sdpMLineIndex: 0 } });
  }
  finishGathering(): void {
    this.iceGatheringState = 'complete';
    this.onicecandidate?.({ candidate: null });
  }
}

/** Waits until `condition` holds (polling every few milliseconds), or fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${condition.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A client token whose payload says `exp` (the signature is not checked by the SDK). */
export function tokenExpiringAt(expSeconds: number, name = 'token'): string {
  const payload = Buffer.from(JSON.stringify({ type: 'register', exp: expSeconds, name })).toString('base64');
  return `eyJhbGciOiJIUzI1NiJ9.${payload}.signature`;
}
