import type {
  ChannelRecording,
  ConnectionRecording,
  ManagementChannelRecording,
  RecordingUpdate,
  WebhookEventConnection,
  WebhookEventRecording,
} from '@switchboard/contracts';

/** A `recording.channel_recording` row as PostgreSQL returns it (bigint as string). */
export interface ChannelRecordingRow {
  id: string;
  organization_id: string;
  application_id: string;
  channel_id: string;
  created_on: string;
  modified_on: string;
  deleted_on: string | null;
  created_by: string | null;
  modified_by: string | null;
  deleted_by: string | null;
  metadata: string | null;
  external_id: string | null;
  tag: string | null;
  deleted: boolean;
  start_timestamp: string;
  stop_timestamp: string | null;
  expiry_timestamp: string | null;
  has_audio: boolean;
  has_video: boolean;
  file_name: string | null;
  audio_file_name: string | null;
  video_file_name: string | null;
  file_size: string | null;
  audio_file_size: string | null;
  video_file_size: string | null;
  ready: boolean;
  audio_ready: boolean;
  video_ready: boolean;
  file_path: string | null;
  audio_file_path: string | null;
  video_file_path: string | null;
  object_key: string | null;
  audio_object_key: string | null;
  video_object_key: string | null;
  recording_path: string | null;
  ingested: boolean;
  mux_pending: boolean;
  move_pending: boolean;
  audio_move_pending: boolean;
  video_move_pending: boolean;
  mux_enabled: boolean;
  move_enabled: boolean;
  delete_files: boolean;
  mux_args: string[];
  mux_seconds: number | null;
  move_seconds: number | null;
  audio_move_seconds: number | null;
  video_move_seconds: number | null;
  stage: Stage;
  stage_changed_on: string;
  error: string | null;
}

export type Stage = 'recording' | 'ingesting' | 'muxing' | 'moving' | 'ready' | 'failed';

export interface ConnectionRecordingRow {
  id: string;
  channel_recording_id: string;
  organization_id: string;
  application_id: string;
  channel_id: string;
  user_id: string;
  device_id: string;
  client_id: string;
  connection_id: string;
  client_protocol: string | null;
  connection_type: string | null;
  connection_tag: string | null;
  tag: string | null;
  audio_id: string | null;
  video_id: string | null;
  created_on: string;
  modified_on: string;
  deleted_on: string | null;
  created_by: string | null;
  modified_by: string | null;
  deleted_by: string | null;
  metadata: string | null;
  external_id: string | null;
  deleted: boolean;
  start_timestamp: string;
  stop_timestamp: string | null;
  audio_first_frame_timestamp: string | null;
  video_first_frame_timestamp: string | null;
  audio_last_frame_timestamp: string | null;
  video_last_frame_timestamp: string | null;
  has_audio: boolean;
  has_video: boolean;
  audio_ready: boolean;
  video_ready: boolean;
  audio_muted: boolean;
  video_muted: boolean;
  audio_disabled: boolean;
  video_disabled: boolean;
  ingested: boolean;
  audio_move_pending: boolean;
  video_move_pending: boolean;
  audio_file_name: string | null;
  video_file_name: string | null;
  audio_file_path: string | null;
  video_file_path: string | null;
  audio_object_key: string | null;
  video_object_key: string | null;
  audio_content: string | null;
  video_content: string | null;
  audio_file_size: string | null;
  video_file_size: string | null;
  video_delay: number | null;
  audio_move_seconds: number | null;
  video_move_seconds: number | null;
  last_event_on: string;
  /** Wall clock (Unix ms) of the last event applied or runtime confirmation: orphan detection. */
  last_seen_on: string;
  closed_reason: string | null;
  orphaned: boolean;
  connection: WebhookEventConnection | null;
}

export interface RecordingUpdateRow {
  connection_recording_id: string;
  index: number;
  timestamp: string;
  connection_tag: string | null;
  audio_muted: boolean;
  video_muted: boolean;
  audio_disabled: boolean;
  video_disabled: boolean;
}

export const numberOrNull = (v: string | number | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);
export const isoDateOrNull = (v: string | number | null | undefined): string | null =>
  v === null || v === undefined ? null : new Date(Number(v)).toISOString();
const isoRequired = (v: string | number): string => new Date(Number(v)).toISOString();

/** Signed URLs of a record's files (null when the file is not available). */
export interface RecordUrls {
  url?: string | null;
  audioUrl: string | null;
  videoUrl: string | null;
}

export function toRecordingUpdate(u: RecordingUpdateRow): RecordingUpdate {
  return {
    index: u.index,
    connectionRecordingId: u.connection_recording_id,
    timestamp: isoRequired(u.timestamp),
    connectionTag: u.connection_tag,
    audioMuted: u.audio_muted,
    videoMuted: u.video_muted,
    audioDisabled: u.audio_disabled,
    videoDisabled: u.video_disabled,
  };
}

export function toConnectionRecording(
  r: ConnectionRecordingRow,
  updates: RecordingUpdateRow[],
  urls: RecordUrls,
): ConnectionRecording {
  return {
    id: r.id,
    audioId: r.audio_id,
    videoId: r.video_id,
    channelRecordingId: r.channel_recording_id,
    createdOn: isoRequired(r.created_on),
    modifiedOn: isoRequired(r.modified_on),
    deletedOn: isoDateOrNull(r.deleted_on),
    startTimestamp: isoRequired(r.start_timestamp),
    stopTimestamp: isoDateOrNull(r.stop_timestamp),
    audioFirstFrameTimestamp: isoDateOrNull(r.audio_first_frame_timestamp),
    videoFirstFrameTimestamp: isoDateOrNull(r.video_first_frame_timestamp),
    audioLastFrameTimestamp: isoDateOrNull(r.audio_last_frame_timestamp),
    videoLastFrameTimestamp: isoDateOrNull(r.video_last_frame_timestamp),
    createdBy: r.created_by,
    modifiedBy: r.modified_by,
    deletedBy: r.deleted_by,
    metadata: r.metadata,
    externalId: r.external_id,
    tag: r.tag,
    applicationId: r.application_id,
    channelId: r.channel_id,
    userId: r.user_id,
    deviceId: r.device_id,
    clientId: r.client_id,
    clientProtocol: r.client_protocol,
    connectionId: r.connection_id,
    connectionType: r.connection_type,
    connectionTag: r.connection_tag,
    deleted: r.deleted,
    hasAudio: r.has_audio,
    hasVideo: r.has_video,
    audioReady: r.audio_ready,
    videoReady: r.video_ready,
    audioMuted: r.audio_muted,
    videoMuted: r.video_muted,
    audioDisabled: r.audio_disabled,
    videoDisabled: r.video_disabled,
    ingested: r.ingested,
    audioMovePending: r.audio_move_pending,
    videoMovePending: r.video_move_pending,
    audioFileName: r.audio_file_name,
    videoFileName: r.video_file_name,
    audioUrl: urls.audioUrl,
    videoUrl: urls.videoUrl,
    audioFilePath: r.audio_file_path,
    videoFilePath: r.video_file_path,
    audioObjectKey: r.audio_object_key,
    videoObjectKey: r.video_object_key,
    audioContent: r.audio_content,
    videoContent: r.video_content,
    audioFileSize: numberOrNull(r.audio_file_size),
    videoFileSize: numberOrNull(r.video_file_size),
    videoDelay: r.video_delay,
    audioMoveSeconds: r.audio_move_seconds,
    videoMoveSeconds: r.video_move_seconds,
    updates: updates.map(toRecordingUpdate),
  };
}

export function toManagementChannelRecording(r: ChannelRecordingRow, urls: RecordUrls): ManagementChannelRecording {
  return {
    id: r.id,
    createdOn: isoRequired(r.created_on),
    modifiedOn: isoRequired(r.modified_on),
    deletedOn: isoDateOrNull(r.deleted_on),
    createdBy: r.created_by,
    modifiedBy: r.modified_by,
    deletedBy: r.deleted_by,
    metadata: r.metadata,
    externalId: r.external_id,
    tag: r.tag,
    applicationId: r.application_id,
    channelId: r.channel_id,
    deleted: r.deleted,
    startTimestamp: isoRequired(r.start_timestamp),
    stopTimestamp: isoDateOrNull(r.stop_timestamp),
    expiryTimestamp: isoDateOrNull(r.expiry_timestamp),
    hasAudio: r.has_audio,
    hasVideo: r.has_video,
    fileName: r.file_name,
    audioFileName: r.audio_file_name,
    videoFileName: r.video_file_name,
    fileSize: numberOrNull(r.file_size),
    audioFileSize: numberOrNull(r.audio_file_size),
    videoFileSize: numberOrNull(r.video_file_size),
    ready: r.ready,
    audioReady: r.audio_ready,
    videoReady: r.video_ready,
    url: urls.url ?? null,
    audioUrl: urls.audioUrl,
    videoUrl: urls.videoUrl,
    filePath: r.file_path,
    audioFilePath: r.audio_file_path,
    videoFilePath: r.video_file_path,
    objectKey: r.object_key,
    audioObjectKey: r.audio_object_key,
    videoObjectKey: r.video_object_key,
    recordingPath: r.recording_path,
    ingested: r.ingested,
    muxPending: r.mux_pending,
    movePending: r.move_pending,
    audioMovePending: r.audio_move_pending,
    videoMovePending: r.video_move_pending,
    muxEnabled: r.mux_enabled,
    moveEnabled: r.move_enabled,
    deleteFiles: r.delete_files,
    muxArgs: Array.isArray(r.mux_args) ? r.mux_args : [],
    muxSeconds: r.mux_seconds,
    moveSeconds: r.move_seconds,
    audioMoveSeconds: r.audio_move_seconds,
    videoMoveSeconds: r.video_move_seconds,
  };
}

export function toChannelRecording(
  r: ChannelRecordingRow,
  urls: RecordUrls,
  connectionRecordings: ConnectionRecording[],
): ChannelRecording {
  return { ...toManagementChannelRecording(r, urls), connectionRecordings };
}

/** The recording part of `channel.recording.*` events (Unix ms timestamps). */
export function channelEventRecording(
  r: ChannelRecordingRow,
  urls: RecordUrls,
  error: string | null = null,
): WebhookEventRecording {
  return {
    id: r.id,
    startTimestamp: Number(r.start_timestamp),
    stopTimestamp: numberOrNull(r.stop_timestamp),
    expiryTimestamp: numberOrNull(r.expiry_timestamp),
    hasAudio: r.has_audio,
    hasVideo: r.has_video,
    ready: r.ready,
    audioReady: r.audio_ready,
    videoReady: r.video_ready,
    fileName: r.file_name,
    audioFileName: r.audio_file_name,
    videoFileName: r.video_file_name,
    url: urls.url ?? null,
    audioUrl: urls.audioUrl,
    videoUrl: urls.videoUrl,
    error,
  };
}

/** The recording part of `connection.recording*` events. */
export function connectionEventRecording(r: ConnectionRecordingRow, urls: RecordUrls): WebhookEventRecording {
  return {
    id: r.id,
    startTimestamp: Number(r.start_timestamp),
    stopTimestamp: numberOrNull(r.stop_timestamp),
    expiryTimestamp: null,
    hasAudio: r.has_audio,
    hasVideo: r.has_video,
    ready: r.audio_ready || r.video_ready,
    audioReady: r.audio_ready,
    videoReady: r.video_ready,
    fileName: null,
    audioFileName: r.audio_file_name,
    videoFileName: r.video_file_name,
    url: null,
    audioUrl: urls.audioUrl,
    videoUrl: urls.videoUrl,
    error: null,
  };
}
