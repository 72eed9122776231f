/**
 * What the SDK needs of its platform, as structural types: a browser's WebSocket and
 * RTCPeerConnection fit, and so do `ws` and werift in Node. Nothing here imports a Node module.
 */

export interface SocketCloseEvent {
  code: number;
  reason: string;
}

/** The part of the WHATWG WebSocket the SDK uses (browsers, Node's global WebSocket, `ws`). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface SessionDescriptionInit {
  type: string;
  sdp?: string;
}
/** An ICE candidate as `RTCIceCandidateInit` (what `connection.candidates` carries). */
export interface IceCandidateInit {
  candidate: string;
  sdpMid?: string | null;
  sdpMLineIndex?: number | null;
  usernameFragment?: string | null;
}

/** A local or remote media track (browser MediaStreamTrack, werift MediaStreamTrack). */
export interface MediaTrackLike {
  readonly kind: string;
  enabled: boolean;
  stop?(): void;
}

/** A statistics report: a map-like of stats objects (`RTCStatsReport`). */
export interface StatsReportLike {
  forEach(callback: (stat: any) => void): void;
}

export interface DataChannelLike {
  readonly label: string;
  send(data: string): void;
  close(): void;
}

/** The part of RTCPeerConnection the SDK uses. */
export interface PeerConnectionLike {
  readonly localDescription: { type: string; sdp: string } | null;
  readonly connectionState: string;
  readonly iceGatheringState: string;
  /** Read by `peer` connections (offer collisions). */
  readonly signalingState?: string;
  createOffer(): Promise<SessionDescriptionInit>;
  createAnswer(): Promise<SessionDescriptionInit>;
  setLocalDescription(description?: any): Promise<unknown>;
  setRemoteDescription(description: any): Promise<unknown>;
  addTransceiver(trackOrKind: any, init?: { direction?: any }): unknown;
  /** Used by `peer` connections when present (it reuses the transceivers of the remote offer). */
  addTrack?(track: any, ...streams: any[]): unknown;
  /** Used by `peer` connections (the other side's candidates). */
  addIceCandidate?(candidate: any): Promise<unknown>;
  createDataChannel(label: string, options?: any): any;
  getStats(): Promise<StatsReportLike>;
  close(): unknown;
  onicecandidate: ((event: any) => void) | null | undefined;
  ontrack: ((event: any) => void) | null | undefined;
  ondatachannel: ((event: any) => void) | null | undefined;
  onconnectionstatechange: ((event: any) => void) | null | undefined;
}
export type PeerConnectionConstructor = new (configuration?: any) => PeerConnectionLike;

/** An RTCIceServer as the `register` result lists it. */
export interface IceServer {
  urls: string[];
  username?: string;
  credential?: string;
}

/** The platform's own constructor (`globalThis.WebSocket`, `globalThis.RTCPeerConnection`), if any. */
export function globalConstructor<T>(name: 'WebSocket' | 'RTCPeerConnection'): T | undefined {
  return (globalThis as Record<string, unknown>)[name] as T | undefined;
}

/** setTimeout that does not keep a Node process alive (browsers have no `unref`). */
export function backgroundTimer(callback: () => void, delayMs: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(callback, delayMs);
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
