/**
 * What the media control (media-control.consumer.ts) needs of a connection event beyond its EventInfo,
 * carried beside it as `media` (like `recording`); webhooks never see it. See README, "Media control".
 */
import type { DomainEvent } from '@switchboard/contracts';

export interface MediaEventContext {
  /** The media server the connection was placed on. */
  mediaServerId: string;
  connectionType: 'sfu' | 'mcu' | 'peer';
  /** Downstream sfu connections: the upstream they receive (null: an upstream connection). */
  remoteConnectionId: string | null;
  /** The effective (all five levels) mutes when the event was built. */
  audioMuted: boolean;
  videoMuted: boolean;
  /** A close by a kick of interface A (the agent kicks rather than leaves). */
  kicked: boolean;
}

export interface MediaDomainEvent extends DomainEvent {
  media?: MediaEventContext | null;
}

/** The media part of a connection event; null for connections on no media server (peer). */
export function mediaContext(
  conn: { mediaServerId: string | null; type: string; remoteConnectionId: string | null },
  settings: { audioMuted: boolean; videoMuted: boolean },
  kicked: boolean,
): MediaEventContext | null {
  if (!conn.mediaServerId || (conn.type !== 'sfu' && conn.type !== 'mcu')) return null;
  return {
    mediaServerId: conn.mediaServerId,
    connectionType: conn.type,
    remoteConnectionId: conn.remoteConnectionId,
    audioMuted: settings.audioMuted,
    videoMuted: settings.videoMuted,
    kicked,
  };
}
