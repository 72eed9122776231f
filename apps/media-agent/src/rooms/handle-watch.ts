import Janode, { type JanodeHandle } from 'janode';
import type { MediaEvents } from './media-events.js';

export interface ConnectionRef {
  applicationId: string;
  channelId: string;
  connectionId: string;
}

/** Whether a connection's PeerConnection is up: set at Janus's webrtcup, cleared at its hangup. */
export interface Liveness {
  connected: boolean;
}

/** Publishes the handle's Janus events (webrtcup, media, slowlink, hangup) as the connection's. */
export function watchHandle(
  handle: JanodeHandle,
  ref: ConnectionRef,
  events: MediaEvents,
  liveness: Liveness,
  onUp?: () => void,
): void {
  handle.on(Janode.EVENT.HANDLE_WEBRTCUP, () => {
    liveness.connected = true;
    onUp?.();
    events.publish({ kind: 'connection.webrtcup', ...ref });
  });
  handle.on(Janode.EVENT.HANDLE_MEDIA, (e: { type?: string; mid?: string; receiving?: boolean }) => {
    if (e.type !== 'audio' && e.type !== 'video') return;
    events.publish({
      kind: 'connection.media',
      ...ref,
      mediaType: e.type,
      ...(e.mid === undefined ? {} : { mid: String(e.mid) }),
      receiving: e.receiving === true,
    });
  });
  handle.on(Janode.EVENT.HANDLE_SLOWLINK, (e: { uplink?: boolean; media?: string; lost?: number }) => {
    events.publish({
      kind: 'connection.slowlink',
      ...ref,
      uplink: e.uplink === true,
      ...(e.media === 'audio' || e.media === 'video' ? { mediaType: e.media } : {}),
      ...(typeof e.lost === 'number' ? { lost: e.lost } : {}),
    });
  });
  handle.on(Janode.EVENT.HANDLE_HANGUP, (e: { reason?: string }) => {
    liveness.connected = false;
    events.publish({ kind: 'connection.hangup', ...ref, reason: String(e.reason ?? '').slice(0, 512) });
  });
}

/** A connection the statistics read: its handle on the agent's Janus session. */
export interface StatsTarget extends ConnectionRef {
  role: 'publisher' | 'subscriber' | 'mixer';
  handleId: number;
  connected: boolean;
}
