/** What runtime-registry pushes to the gateway replica holding a client, and what it computes for it. */
import type { ChannelClaim } from '../interface-b/index.js';
import type { ConnectionState, MessageBody } from '../interface-a/index.js';
import type { MediaIceCandidate, MediaSessionDescription } from './media.js';
import type { ClientRef } from './runtime.js';

/**
 * What applies to one connection after the levels above it were combined: channel > user in
 * channel > device in channel > client in channel > connection. A level reaches every connection
 * below it except those its excluded id lists name; among the levels that reach a connection, the
 * most recent write of each setting wins (whatever its level). Unset: false / null.
 */
export interface EffectiveSettings {
  recording: boolean;
  recordingTag: string | null;
  audioMuted: boolean;
  videoMuted: boolean;
  audioUnmuteDisabled: boolean;
  videoUnmuteDisabled: boolean;
}

/** Whether two EffectiveSettings say the same (the six fields). */
export function sameSettings(a: EffectiveSettings, b: EffectiveSettings): boolean {
  return (
    a.recording === b.recording &&
    a.recordingTag === b.recordingTag &&
    a.audioMuted === b.audioMuted &&
    a.videoMuted === b.videoMuted &&
    a.audioUnmuteDisabled === b.audioUnmuteDisabled &&
    a.videoUnmuteDisabled === b.videoUnmuteDisabled
  );
}

// ---------------------------------------------------------------------------------------------
// Pushes (registry -> the gateway replica holding the client)
// ---------------------------------------------------------------------------------------------

export type ServerPush =
  | {
      type: 'message';
      channelId: string | null;
      message: MessageBody;
      from: {
        userId: string | null;
        userAlias: string | null;
        deviceId: string | null;
        deviceAlias: string | null;
        clientId: string | null;
        clientTag: string | null;
        clientRoles: string[] | null;
      };
    }
  | { type: 'kicked'; channelId: string; connectionId?: string | null }
  | {
      type: 'settings';
      channelId: string;
      connectionId: string;
      settings: EffectiveSettings;
      /**
       * Order of settings changes within the application (increasing). Two updates handled by two
       * registry replicas may push out of order: a push with a lower version than one already
       * applied to the connection is stale and may be ignored.
       */
      version?: number;
    }
  | {
      type: 'client.updated';
      userAlias: string | null;
      deviceAlias: string | null;
      tag: string | null;
      roles: string[];
    }
  | { type: 'claim.updated'; channelId: string; claim: ChannelClaim }
  /** The client registered again through another gateway replica: the old session ends. */
  | { type: 'unregistered'; reason: string }
  /**
   * The media server moved a connection to a state the client does not report itself (`connected`
   * when Janus says the PeerConnection is up): the edge and the client follow it.
   */
  | { type: 'connection.state'; channelId: string; connectionId: string; state: ConnectionState }
  /**
   * The media server renegotiates a connection (a subscriber whose publisher's streams changed):
   * the client answers with the `connection.answer` request.
   */
  | { type: 'connection.offer'; channelId: string; connectionId: string; offer: MediaSessionDescription }
  /**
   * The connection is gone because of its media (`failed`: ICE/DTLS down or Janus hung it up;
   * `remote-left` / `remote-kicked`: the upstream a downstream received, or the other peer, is gone;
   * `media-server-lost`: its Janus stopped). The registry closed it; the edge forgets it, like a kick of
   * the connection.
   */
  | { type: 'connection.ended'; channelId: string; connectionId: string; reason: ConnectionEndReason }
  /**
   * To the other members of the channel: an upstream sfu connection is publishing (Janus says its
   * PeerConnection is up, so a subscription to it succeeds), or it stopped (closed, failed, kicked).
   */
  | { type: 'upstream.opened'; channelId: string; upstream: RemoteUpstream }
  | { type: 'upstream.closed'; channelId: string; connectionId: string }
  /** The other side of a `peer` connection signals (relayed by the edge: no media server). */
  | {
      type: 'connection.relayed';
      channelId: string;
      connectionId: string;
      remoteConnectionId: string;
      offer?: MediaSessionDescription;
      answer?: MediaSessionDescription;
      candidates?: MediaIceCandidate[];
      completed?: boolean;
    };

export type ConnectionEndReason = 'failed' | 'remote-left' | 'remote-kicked' | 'media-server-lost';

/**
 * An upstream `sfu` connection another client of the channel publishes: a client receives it by
 * opening a downstream connection naming `connectionId` as its `remoteConnectionId`.
 */
export interface RemoteUpstream {
  connectionId: string;
  userId: string;
  userAlias: string | null;
  deviceId: string;
  deviceAlias: string | null;
  clientId: string;
  clientTag: string | null;
  /** Which kinds it sends. */
  audio: boolean;
  video: boolean;
  data: boolean;
}

export interface PushBatch {
  deliveries: Array<{ client: ClientRef; push: ServerPush }>;
}
