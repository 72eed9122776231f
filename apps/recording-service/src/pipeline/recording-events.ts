import { createHash } from 'node:crypto';
import type { DomainEvent, EventInfo, WebhookEventConnection, WebhookEventName } from '@switchboard/contracts';
import { channelEventRecording, connectionEventRecording, type ChannelRecordingRow, type ConnectionRecordingRow, type RecordUrls } from '../recordings/rows.js';

/**
 * A stable event id for "this happened to this recording" (UUID-shaped, from SHA-256), so that a
 * job retried after a crash publishes the same id and JetStream drops the duplicate.
 */
export function recordingEventId(recordingId: string, type: string): string {
  const h = createHash('sha256').update(`${recordingId}|${type}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

function base(type: WebhookEventName, id: string): Pick<EventInfo, 'id' | 'timestamp' | 'origin' | 'type' | 'forced' | 'message'> {
  return { id, timestamp: Date.now(), origin: 'server', type, forced: false, message: null };
}

export function channelRecordingEvent(type: WebhookEventName, r: ChannelRecordingRow, urls: RecordUrls, error: string | null = null): DomainEvent {
  return {
    event: {
      ...base(type, recordingEventId(r.id, type)),
      channel: { id: r.channel_id, applicationId: r.application_id, channelRecording: channelEventRecording(r, urls, error) },
      client: null,
      connection: null,
    },
    applicationId: r.application_id,
    organizationId: r.organization_id,
  };
}

/** The connection part: as last reported by the runtime, with the recording attached. */
function connectionPart(c: ConnectionRecordingRow, urls: RecordUrls): WebhookEventConnection {
  const known = c.connection;
  const fallback: WebhookEventConnection = {
    id: c.connection_id,
    applicationId: c.application_id,
    channelId: c.channel_id,
    userId: c.user_id,
    userAlias: null,
    deviceId: c.device_id,
    deviceAlias: null,
    clientId: c.client_id,
    clientTag: null,
    clientRoles: [],
    externalId: null,
    tag: c.connection_tag,
    type: (c.connection_type ?? 'sfu') as WebhookEventConnection['type'],
    state: 'closed',
    isSip: false,
    error: null,
    remoteConnectionId: null,
    recording: false,
    recordingTag: c.tag,
    hasAudio: c.has_audio,
    hasVideo: c.has_video,
    hasData: false,
    audioDirection: 'sendonly',
    videoDirection: 'sendonly',
    dataDirection: 'inactive',
    localAudioMuted: c.audio_muted,
    localVideoMuted: c.video_muted,
    localAudioDisabled: c.audio_disabled,
    localVideoDisabled: c.video_disabled,
    remoteAudioDisabled: false,
    remoteVideoDisabled: false,
    stats: null,
    connectionRecording: null,
  };
  return { ...fallback, ...(known ?? {}), stats: null, connectionRecording: connectionEventRecording(c, urls) };
}

export function connectionRecordingEvent(type: WebhookEventName, parent: ChannelRecordingRow, c: ConnectionRecordingRow, urls: RecordUrls): DomainEvent {
  const connection = connectionPart(c, urls);
  return {
    event: {
      ...base(type, recordingEventId(c.id, type)),
      channel: { id: c.channel_id, applicationId: c.application_id, channelRecording: null },
      client: {
        id: connection.clientId,
        userId: connection.userId,
        userAlias: connection.userAlias,
        deviceId: connection.deviceId,
        deviceAlias: connection.deviceAlias,
        tag: connection.clientTag,
        roles: connection.clientRoles,
        applicationId: connection.applicationId,
        stats: null,
      },
      connection,
    },
    applicationId: parent.application_id,
    organizationId: parent.organization_id,
  };
}
