import { mediaContext, type MediaDomainEvent } from './media-control-context.js';

export const JANUS = 'janus-1';
export const SIMULATED = 'sim-1';

export interface EventSpec {
  type: string;
  origin?: 'api' | 'client' | 'server';
  connectionId: string;
  channelId?: string;
  server?: string;
  connectionType?: 'sfu' | 'mcu' | 'peer';
  remoteConnectionId?: string | null;
  audioMuted?: boolean;
  videoMuted?: boolean;
  kicked?: boolean;
  /** The connection's (effective) recording flag. */
  recording?: boolean;
}

/** A connection event as the registry publishes it (only the parts the media control reads). */
export function connectionEventOf(spec: EventSpec, timestamp = Date.now()): MediaDomainEvent {
  const channelId = spec.channelId ?? 'ch';
  const type = spec.connectionType ?? 'sfu';
  return {
    applicationId: 'app',
    organizationId: 'org',
    event: {
      type: spec.type,
      origin: spec.origin ?? 'api',
      timestamp,
      channel: { id: channelId },
      connection: {
        id: spec.connectionId,
        channelId,
        userId: 'u',
        deviceId: 'd',
        clientId: spec.connectionId,
        recording: spec.recording ?? false,
      },
    },
    media: mediaContext(
      { mediaServerId: spec.server ?? JANUS, type, remoteConnectionId: spec.remoteConnectionId ?? null },
      { audioMuted: spec.audioMuted ?? false, videoMuted: spec.videoMuted ?? false },
      spec.kicked ?? false,
    ),
  } as unknown as MediaDomainEvent;
}
