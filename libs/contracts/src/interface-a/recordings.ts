/**
 * Recording records of service-spec.md section 2.A: channel recording, connection recording
 * (shared with interface B, which lists it unchanged) and the recording update (mute timeline).
 *
 * Timestamps are ISO 8601 date-time strings, ids typed `uuid` are UUID strings (the tables type
 * them explicitly, so interface B uses the same types). Nullability decisions (the tables give no
 * `|null`): timestamps and actors of things that may not have happened yet (`stopTimestamp`,
 * `deletedOn`, `deletedBy`, first/last frame...), names, paths, URLs, sizes and durations of files
 * that may not exist yet, and free-text fields are `|null`; ids of the owning entities, flags and
 * `createdOn`/`modifiedOn`/`startTimestamp` are never null.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Count, DateTime, Nullable, StringList, Uuid, record } from './record-schema.js';

const NullableString = () => Nullable(Type.String());
const NullableNumber = () => Nullable(Type.Number({ minimum: 0 }));

export const RecordingUpdate = record(
  'RecordingUpdate',
  {
    index: Count({ description: 'Position of the update in the connection recording timeline, from 0.' }),
    connectionRecordingId: Uuid(),
    timestamp: DateTime(),
    connectionTag: NullableString(),
    audioMuted: Type.Boolean(),
    videoMuted: Type.Boolean(),
    audioDisabled: Type.Boolean(),
    videoDisabled: Type.Boolean(),
  },
  'A change of mute/disable state during a connection recording.',
);
export type RecordingUpdate = Static<typeof RecordingUpdate>;

export const ConnectionRecording = record(
  'ConnectionRecording',
  {
    id: Uuid(),
    audioId: Nullable(Uuid()),
    videoId: Nullable(Uuid()),
    channelRecordingId: Uuid(),
    createdOn: DateTime(),
    modifiedOn: DateTime(),
    deletedOn: Nullable(DateTime()),
    startTimestamp: DateTime(),
    stopTimestamp: Nullable(DateTime(), { description: 'null while the connection is still being recorded.' }),
    audioFirstFrameTimestamp: Nullable(DateTime()),
    videoFirstFrameTimestamp: Nullable(DateTime()),
    audioLastFrameTimestamp: Nullable(DateTime()),
    videoLastFrameTimestamp: Nullable(DateTime()),
    createdBy: Nullable(Uuid()),
    modifiedBy: Nullable(Uuid()),
    deletedBy: Nullable(Uuid()),
    metadata: NullableString(),
    externalId: NullableString(),
    tag: NullableString(),
    applicationId: Type.String(),
    channelId: Type.String(),
    userId: Type.String(),
    deviceId: Type.String(),
    clientId: Type.String(),
    clientProtocol: NullableString(),
    connectionId: Type.String(),
    connectionType: NullableString(),
    connectionTag: NullableString(),
    deleted: Type.Boolean(),
    hasAudio: Type.Boolean(),
    hasVideo: Type.Boolean(),
    audioReady: Type.Boolean(),
    videoReady: Type.Boolean(),
    audioMuted: Type.Boolean(),
    videoMuted: Type.Boolean(),
    audioDisabled: Type.Boolean(),
    videoDisabled: Type.Boolean(),
    ingested: Type.Boolean(),
    audioMovePending: Type.Boolean(),
    videoMovePending: Type.Boolean(),
    audioFileName: NullableString(),
    videoFileName: NullableString(),
    audioUrl: NullableString(),
    videoUrl: NullableString(),
    audioFilePath: NullableString(),
    videoFilePath: NullableString(),
    audioObjectKey: NullableString(),
    videoObjectKey: NullableString(),
    audioContent: NullableString(),
    videoContent: NullableString(),
    audioFileSize: NullableNumber(),
    videoFileSize: NullableNumber(),
    videoDelay: Nullable(Type.Number(), {
      description: 'Offset of the video track relative to the audio track, in seconds.',
    }),
    audioMoveSeconds: NullableNumber(),
    videoMoveSeconds: NullableNumber(),
    updates: Type.Array(RecordingUpdate, { description: 'Mute/disable timeline of the connection.' }),
  },
  'The recording of one connection inside a channel recording.',
);
export type ConnectionRecording = Static<typeof ConnectionRecording>;

export const ChannelRecording = record(
  'ChannelRecording',
  {
    id: Uuid(),
    createdOn: DateTime(),
    modifiedOn: DateTime(),
    deletedOn: Nullable(DateTime(), { description: 'Set when `deleted` is true.' }),
    createdBy: Nullable(Uuid()),
    modifiedBy: Nullable(Uuid()),
    deletedBy: Nullable(Uuid(), { description: 'Set when `deleted` is true.' }),
    metadata: NullableString(),
    externalId: NullableString(),
    tag: NullableString(),
    applicationId: Type.String(),
    channelId: Type.String(),
    deleted: Type.Boolean(),
    startTimestamp: DateTime(),
    stopTimestamp: Nullable(DateTime(), { description: 'null while the channel is still being recorded.' }),
    expiryTimestamp: Nullable(DateTime(), { description: 'When the recording expires; null: never.' }),
    hasAudio: Type.Boolean(),
    hasVideo: Type.Boolean(),
    fileName: NullableString(),
    audioFileName: NullableString(),
    videoFileName: NullableString(),
    fileSize: NullableNumber(),
    audioFileSize: NullableNumber(),
    videoFileSize: NullableNumber(),
    ready: Type.Boolean(),
    audioReady: Type.Boolean(),
    videoReady: Type.Boolean(),
    url: NullableString(),
    audioUrl: NullableString(),
    videoUrl: NullableString(),
    filePath: NullableString(),
    audioFilePath: NullableString(),
    videoFilePath: NullableString(),
    objectKey: NullableString(),
    audioObjectKey: NullableString(),
    videoObjectKey: NullableString(),
    recordingPath: NullableString(),
    ingested: Type.Boolean(),
    muxPending: Type.Boolean(),
    movePending: Type.Boolean(),
    audioMovePending: Type.Boolean(),
    videoMovePending: Type.Boolean(),
    muxEnabled: Type.Boolean(),
    moveEnabled: Type.Boolean(),
    deleteFiles: Type.Boolean(),
    muxArgs: StringList({ description: 'Arguments passed to the mux tool.' }),
    muxSeconds: NullableNumber(),
    moveSeconds: NullableNumber(),
    audioMoveSeconds: NullableNumber(),
    videoMoveSeconds: NullableNumber(),
    connectionRecordings: Type.Array(ConnectionRecording),
  },
  'The recording of a channel (interface A), with its connection recordings.',
);
export type ChannelRecording = Static<typeof ChannelRecording>;
