import { createHash } from 'node:crypto';
import type { DomainEvent, EventInfo, WebhookEventConnection, WebhookEventName } from '@switchboard/contracts';
import {
  channelEventRecording,
  connectionEventRecording,
  type ChannelRecordingRow,
  type ConnectionRecordingRow,
  type RecordUrls,
} from '../recordings/rows.js';

/**
 * A stable event id for "this happened to this recording" (UUID-shaped, from SHA-256), so that a
 * job retried after a crash publishes the same id and JetStream drops the duplicate.
 */
export function recordingEventId(recordingId: string, type: string): string {
  const h = createHash('sha256').update(`${recordingId}|${type}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/**
 * `at`: when it happened (Unix ms), the time of the change the event announces as written to the
 * database. Every event of one change gets the same one (the moment a `batch: true` webhook groups by).
 */
function base(
  type: WebhookEventName,
  id: string,
  at: number,
): Pick<EventInfo, 'id' | 'timestamp' | 'origin' | 'type' | 'forced' | 'message'> {
  return { id, timestamp: Math.round(at), origin: 'server', type, forced: false, message: null };
}

/** A `channel.recording.*` event of a change made at `at` (Unix ms). */
export function channelRecordingEvent(
  type: WebhookEventName,
  r: ChannelRecordingRow,
  urls: RecordUrls,
  at: number,
  error: string | null = null,
): DomainEvent {
  return {
    event: {
      ...base(type, recordingEventId(r.id, type), at),
      channel: {
        id: r.channel_id,
        applicationId: r.application_id,
        channelRecording: channelEventRecording(r, urls, error),
      },
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
  return { ...fallback, ...known, stats: null, connectionRecording: connectionEventRecording(c, urls) };
}

/** A `connection.recording*` event of a change made at `at` (Unix ms). */
export function connectionRecordingEvent(
  type: WebhookEventName,
  parent: ChannelRecordingRow,
  c: ConnectionRecordingRow,
  urls: RecordUrls,
  at: number,
): DomainEvent {
  const connection = connectionPart(c, urls);
  return {
    event: {
      ...base(type, recordingEventId(c.id, type), at),
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

/**
 * The `*.ready` events of a moved recording (`r` as its stage change to ready/failed left it) and
 * of its connection recordings: one moment, so all of them carry the time of that stage change
 * (`stage_changed_on`), not the time each was built.
 */
export function readyEvents(
  r: ChannelRecordingRow,
  children: readonly ConnectionRecordingRow[],
  urls: { channel(r: ChannelRecordingRow): RecordUrls; connection(c: ConnectionRecordingRow): RecordUrls },
): DomainEvent[] {
  const at = Number(r.stage_changed_on);
  const channelUrls = urls.channel(r);
  const events: DomainEvent[] = [];
  const channel = (type: WebhookEventName) => events.push(channelRecordingEvent(type, r, channelUrls, at));
  if (r.ready) channel('channel.recording.ready');
  if (r.audio_ready) channel('channel.recording.audio.ready');
  if (r.video_ready) channel('channel.recording.video.ready');
  for (const c of children) {
    const curls = urls.connection(c);
    if (c.audio_ready) events.push(connectionRecordingEvent('connection.recording.audio.ready', r, c, curls, at));
    if (c.video_ready) events.push(connectionRecordingEvent('connection.recording.video.ready', r, c, curls, at));
    if (c.audio_ready || c.video_ready)
      events.push(connectionRecordingEvent('connection.recordings.ready', r, c, curls, at));
  }
  return events;
}
