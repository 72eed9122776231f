/**
 * What the recording pipeline exchanges besides queries and commands: the channel config's part
 * (asked of management-api), the mux JSON, the recording context of domain events, file paths.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validator } from '../validation/validate.js';
import type { DomainEvent } from './runtime.js';

// ---------------------------------------------------------------------------------------------
// The channel config's part in recording (asked by recording-service, answered by management-api)
// ---------------------------------------------------------------------------------------------

/**
 * The recording fields of the ONE channel config that governs a channel (`selectChannelConfig`);
 * how recording-service uses them is in docs/recordings-contract.md.
 */
export const ChannelRecordingSettingsSubject = 'management-api.v1.channel-configs.recording' as const;

export const ChannelRecordingSettingsRequest = Type.Object(
  {
    applicationId: Type.String({ minLength: 1, maxLength: 256 }),
    channelId: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { $id: 'ChannelRecordingSettingsRequest', additionalProperties: false },
);
export type ChannelRecordingSettingsRequest = Static<typeof ChannelRecordingSettingsRequest>;
export const channelRecordingSettingsRequest = validator(ChannelRecordingSettingsRequest);

export interface ChannelRecordingSettings {
  /** The governing channel config; null when none matches the channel. */
  channelConfigId: string | null;
  /** Its `recordingEnabled` (null: not set, or no config). */
  recordingEnabled: boolean | null;
  /** Its `recordingManagementOverride.muxDisabled` (false when absent). */
  muxDisabled: boolean;
}

// ---------------------------------------------------------------------------------------------
// Mux JSON
// ---------------------------------------------------------------------------------------------

/**
 * The recording JSON for the mux tool (`muxjson` reads; a JSON string). Timestamps are ISO 8601;
 * `offsetSeconds` is where the connection's media starts relative to the channel recording start.
 * The connection form (`connectionRecording.muxJson`) is one element of `connectionRecordings`.
 */
export interface MuxJsonConnection {
  id: string;
  applicationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  connectionTag: string | null;
  tag: string | null;
  startTimestamp: string;
  stopTimestamp: string | null;
  offsetSeconds: number;
  audio: {
    file: string | null;
    firstFrameTimestamp: string | null;
    lastFrameTimestamp: string | null;
    content: string | null;
  } | null;
  video: {
    file: string | null;
    firstFrameTimestamp: string | null;
    lastFrameTimestamp: string | null;
    content: string | null;
    delay: number | null;
  } | null;
  updates: Array<{
    index: number;
    timestamp: string;
    connectionTag: string | null;
    audioMuted: boolean;
    videoMuted: boolean;
    audioDisabled: boolean;
    videoDisabled: boolean;
  }>;
}

export interface MuxJson {
  id: string;
  applicationId: string;
  channelId: string;
  startTimestamp: string;
  stopTimestamp: string | null;
  durationSeconds: number | null;
  layout: 'grid';
  output: { file: string | null; audioFile: string | null; videoFile: string | null };
  connectionRecordings: MuxJsonConnection[];
}

// ---------------------------------------------------------------------------------------------
// What the recording side needs from domain events
// ---------------------------------------------------------------------------------------------

/**
 * Recording starts, stops and the mute timeline come from the `connection.*` DomainEvents: the
 * connection part of EventInfo carries `recording`, `recordingTag`, `hasAudio`/`hasVideo`,
 * `localAudioMuted`/`localVideoMuted`, `localAudioDisabled`/`localVideoDisabled`,
 * `remoteAudioDisabled`/`remoteVideoDisabled`, `tag` and `state`. What the webhook subset lacks may
 * come in this optional extra beside `event` (the runtime adds it; absent parts are null):
 * `clientProtocol` (the connection recording's field of that name) and `recordingMode`
 * (`AudioVideo` default, `Audio`, `Video`: which tracks are recorded).
 */
export interface RecordingEventContext {
  clientProtocol?: string | null;
  recordingMode?: string | null;
}
export interface RecordingDomainEvent extends DomainEvent {
  recording?: RecordingEventContext | null;
}

/** Encodes an id as one safe path segment (percent-encoding; never `.` or `..`). */
export function recordingPathSegment(id: string): string {
  return encodeURIComponent(id).replace(/\./g, '%2E').replace(/\*/g, '%2A');
}

// ---------------------------------------------------------------------------------------------
// Uploads of connection recording files (media-agent → recording-service, no shared disk)
// ---------------------------------------------------------------------------------------------

/**
 * The JetStream Object Store bucket a media-agent puts a connection recording's converted files
 * into and the ingest takes them from (one per namespace). An object is named by
 * `recordingUploadName`; its file name (base and extension) is in the metadata `fileName`, the
wall-clock time of its first frame in `firstFrameTimestamp` when the media server knows it.
 */
export const recordingUploadsBucket = (namespace: string) => `${namespace}-recording-uploads`;
export const recordingUploadName = (channelRecordingId: string, fileBase: string) =>
  `${channelRecordingId}/${fileBase}`;
export const RECORDING_UPLOAD_FILE_NAME = 'fileName';
/** Metadata: Unix ms at which the media server received the file's first packet (its time 0). */
export const RECORDING_UPLOAD_FIRST_FRAME = 'firstFrameTimestamp';
/**
 * Metadata: JSON array of the moderations Janus applied to the publisher while it recorded
 * (`RecordingModeration`): the times its media changed, which the ingest puts into the timeline.
 */
export const RECORDING_UPLOAD_MODERATIONS = 'moderations';
export interface RecordingModeration {
  /** Unix ms at which Janus confirmed the moderation. */
  at: number;
  audioMuted?: boolean;
  videoMuted?: boolean;
}
/** Metadata: why the recording ended before it was stopped (media-agent restarted, media server lost). */
export const RECORDING_UPLOAD_INTERRUPTED = 'interrupted';
/** Uploads nobody took (a recording deleted before its ingest) expire after this many days. */
export const RECORDING_UPLOADS_TTL_DAYS = 7;
