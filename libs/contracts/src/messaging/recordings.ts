/**
 * The recording contract: what admin-gateway (interface A), management-api (interface B) and the
 * media server side ask `recording-service`. Subjects, tenancy, list order and the file handshake
 * are in docs/recordings-contract.md; request validation in recording-requests.ts.
 */
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import type { ChannelRecording, ConnectionRecording } from '../interface-a/recordings.js';
import { ChannelRecordingPatch } from '../interface-a/patches.js';
import type { ManagementChannelRecording } from '../interface-b/responses.js';

export const RecordingSubjects = {
  query: 'recording-service.v1.query',
  command: 'recording-service.v1.command',
} as const;

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

const Id = () => Type.String({ minLength: 1, maxLength: 256 });
const RecordingId = () => Type.String({ format: 'uuid' });
/** Unix seconds, from 1970 to the year 9999. */
const UnixSeconds = () => Type.Optional(Type.Integer({ minimum: 0, maximum: 253402300799 }));

export const MAX_TAKE = 1000;
export const DEFAULT_TAKE = 100;

const windowProps = {
  timestampMin: UnixSeconds(),
  timestampMax: UnixSeconds(),
  skip: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
  take: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TAKE })),
};
const countProps = { timestampMin: UnixSeconds(), timestampMax: UnixSeconds() };

/** Raw OData options as received (keys lower-case, e.g. `$filter`). */
export const ODataOptions = Type.Object(
  {
    $filter: Type.Optional(Type.String()),
    $orderby: Type.Optional(Type.String()),
    $top: Type.Optional(Type.String()),
    $skip: Type.Optional(Type.String()),
    $count: Type.Optional(Type.String()),
    $select: Type.Optional(Type.String()),
    $expand: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ODataOptions = Static<typeof ODataOptions>;

const applicationParams = { applicationId: Id() };
const channelParams = { ...applicationParams, channelId: Id() };
const userParams = { userId: Id() };
const deviceParams = { ...userParams, deviceId: Id() };
const clientParams = { ...deviceParams, clientId: Id() };
const connectionParams = { ...clientParams, connectionId: Id() };
const channelRecordingParams = { ...channelParams, channelRecordingId: RecordingId() };
const connectionRecordingParams = { ...channelParams, ...connectionParams, connectionRecordingId: RecordingId() };

/**
 * Every query kind, with the interface route it serves (`P` = `/admin/api/v1.0`,
 * `C` = `P/applications/{a}/channels/{ch}`, `UDC` = `users/{u}/devices/{d}/clients/{cl}`).
 */
export const RECORDING_QUERY_PARAMS = {
  // ---- interface A: channel recordings ----
  /** GET P/applications/{a}/recordings */
  'channelRecordings.list': { ...applicationParams, ...windowProps },
  /** GET P/applications/{a}/recordings/count */
  'channelRecordings.count': { ...applicationParams, ...countProps },
  /** GET C/recordings */
  'channel.recordings.list': { ...channelParams, ...windowProps },
  /** GET C/recordings/count */
  'channel.recordings.count': { ...channelParams, ...countProps },
  /** GET C/recordings/{r} (interface A record, with its connection recordings) */
  'channelRecording.get': channelRecordingParams,
  /** GET C/recordings/{r}/muxjson; also interface B `.../MuxJson` */
  'channelRecording.muxJson': channelRecordingParams,
  /** GET C/recordings/{r}/url; also interface B `.../Url` */
  'channelRecording.url': channelRecordingParams,
  /** GET C/recordings/{r}/audiourl; also interface B `.../AudioUrl` */
  'channelRecording.audioUrl': channelRecordingParams,
  /** GET C/recordings/{r}/videourl; also interface B `.../VideoUrl` */
  'channelRecording.videoUrl': channelRecordingParams,

  // ---- interface A: the 14 connection recording lists ----
  /** GET P/applications/{a}/connectionrecordings */
  'application.connectionRecordings.list': { ...applicationParams, ...windowProps },
  /** GET P/applications/{a}/users/{u}/connectionrecordings */
  'user.connectionRecordings.list': { ...applicationParams, ...userParams, ...windowProps },
  /** GET P/applications/{a}/users/{u}/devices/{d}/connectionrecordings */
  'device.connectionRecordings.list': { ...applicationParams, ...deviceParams, ...windowProps },
  /** GET P/applications/{a}/UDC/connectionrecordings */
  'client.connectionRecordings.list': { ...applicationParams, ...clientParams, ...windowProps },
  /** GET C/connectionrecordings */
  'channel.connectionRecordings.list': { ...channelParams, ...windowProps },
  /** GET C/users/{u}/connectionrecordings */
  'channel.user.connectionRecordings.list': { ...channelParams, ...userParams, ...windowProps },
  /** GET C/users/{u}/devices/{d}/connectionrecordings */
  'channel.device.connectionRecordings.list': { ...channelParams, ...deviceParams, ...windowProps },
  /** GET C/UDC/connectionrecordings */
  'channel.client.connectionRecordings.list': { ...channelParams, ...clientParams, ...windowProps },
  /** GET C/UDC/connections/{cn}/recordings */
  'connection.connectionRecordings.list': { ...channelParams, ...connectionParams, ...windowProps },
  /** GET C/recordings/{r}/connectionrecordings */
  'channelRecording.connectionRecordings.list': { ...channelRecordingParams, ...windowProps },
  /** GET C/recordings/{r}/users/{u}/connectionrecordings */
  'channelRecording.user.connectionRecordings.list': { ...channelRecordingParams, ...userParams, ...windowProps },
  /** GET C/recordings/{r}/users/{u}/devices/{d}/connectionrecordings */
  'channelRecording.device.connectionRecordings.list': { ...channelRecordingParams, ...deviceParams, ...windowProps },
  /** GET C/recordings/{r}/UDC/connectionrecordings */
  'channelRecording.client.connectionRecordings.list': { ...channelRecordingParams, ...clientParams, ...windowProps },
  /** GET C/recordings/{r}/UDC/connections/{cn}/recordings */
  'channelRecording.connection.connectionRecordings.list': {
    ...channelRecordingParams,
    ...connectionParams,
    ...windowProps,
  },

  // ---- interface A: one connection recording ----
  /** GET C/UDC/connections/{cn}/recordings/{cr} */
  'connectionRecording.get': connectionRecordingParams,
  /** GET C/UDC/connections/{cn}/recordings/{cr}/muxjson */
  'connectionRecording.muxJson': connectionRecordingParams,
  /** GET C/UDC/connections/{cn}/recordings/{cr}/audiourl */
  'connectionRecording.audioUrl': connectionRecordingParams,
  /** GET C/UDC/connections/{cn}/recordings/{cr}/videourl */
  'connectionRecording.videoUrl': connectionRecordingParams,

  // ---- interface B (management-api) ----
  /** GET /ChannelRecordings/{applicationId}?$filter&$orderby&$top&$skip&$count&$select */
  'management.channelRecordings.list': { ...applicationParams, options: Type.Optional(ODataOptions) },
  /** GET /ChannelRecordings/{a}/{ch}/{r}?$select (the string reads use the `channelRecording.*` kinds) */
  'management.channelRecording.get': { ...channelRecordingParams, options: Type.Optional(ODataOptions) },
  /** GET /ConnectionRecordings/{applicationId}?$filter&$orderby&$top&$skip&$count&$select */
  'management.connectionRecordings.list': { ...applicationParams, options: Type.Optional(ODataOptions) },
  /** GET /ConnectionRecordings/{a}/{cr}?$select */
  'management.connectionRecording.get': {
    ...applicationParams,
    connectionRecordingId: RecordingId(),
    options: Type.Optional(ODataOptions),
  },
  /**
   * GET /ConnectionRecordings/{a}/{cr}/Url: the URL of the muxed file of the channel recording the connection recording
   * belongs to.
   */
  'management.connectionRecording.url': { ...applicationParams, connectionRecordingId: RecordingId() },
  /** GET /ConnectionRecordings/{a}/{cr}/AudioUrl */
  'management.connectionRecording.audioUrl': { ...applicationParams, connectionRecordingId: RecordingId() },
  /** GET /ConnectionRecordings/{a}/{cr}/VideoUrl */
  'management.connectionRecording.videoUrl': { ...applicationParams, connectionRecordingId: RecordingId() },
  /** GET /RecordingStorage/UsedSize: bytes of the files of the caller's organization (not deleted). */
  'storage.usedSize': {},
  /** GET /RecordingStorage/UsedSize/{applicationId} */
  'storage.usedSize.application': applicationParams,

  // ---- media server side ----
  /**
   * Where the media server writes the files of the connection's current (or latest) connection
   * recording. Operator scope, or the organization of the recording.
   */
  'media.recordingTarget': { ...channelParams, connectionId: Id() },
} as const satisfies Record<string, TProperties>;

export type RecordingQueryKind = keyof typeof RECORDING_QUERY_PARAMS;

/** The answer of `media.recordingTarget`. */
export interface RecordingTarget {
  connectionRecordingId: string;
  channelRecordingId: string;
  /** Absolute directory the files go to (created by the service). */
  directory: string;
  /** File name without extension of the audio file (`<connectionRecordingId>.audio`). */
  audioBase: string;
  videoBase: string;
  hasAudio: boolean;
  hasVideo: boolean;
  /** Unix ms; `stopTimestamp` null while recording. */
  startTimestamp: number;
  stopTimestamp: number | null;
  /** The mute timeline so far (the media server records silence / black while muted or disabled). */
  updates: Array<{
    timestamp: number;
    audioMuted: boolean;
    videoMuted: boolean;
    audioDisabled: boolean;
    videoDisabled: boolean;
  }>;
}

export interface ODataListResult<T> {
  value: T[];
  '@odata.count'?: number;
}

type ListOfChannel = ChannelRecording[];
type ListOfConnection = ConnectionRecording[];

/** Fails to compile when a query kind has no result type. */
type Complete<T extends Record<RecordingQueryKind, unknown>> = T;

/** Result of each query kind. */
export type RecordingQueryResults = Complete<{
  'channelRecordings.list': ListOfChannel;
  'channelRecordings.count': number;
  'channel.recordings.list': ListOfChannel;
  'channel.recordings.count': number;
  'channelRecording.get': ChannelRecording;
  'channelRecording.muxJson': string;
  'channelRecording.url': string;
  'channelRecording.audioUrl': string;
  'channelRecording.videoUrl': string;
  'application.connectionRecordings.list': ListOfConnection;
  'user.connectionRecordings.list': ListOfConnection;
  'device.connectionRecordings.list': ListOfConnection;
  'client.connectionRecordings.list': ListOfConnection;
  'channel.connectionRecordings.list': ListOfConnection;
  'channel.user.connectionRecordings.list': ListOfConnection;
  'channel.device.connectionRecordings.list': ListOfConnection;
  'channel.client.connectionRecordings.list': ListOfConnection;
  'connection.connectionRecordings.list': ListOfConnection;
  'channelRecording.connectionRecordings.list': ListOfConnection;
  'channelRecording.user.connectionRecordings.list': ListOfConnection;
  'channelRecording.device.connectionRecordings.list': ListOfConnection;
  'channelRecording.client.connectionRecordings.list': ListOfConnection;
  'channelRecording.connection.connectionRecordings.list': ListOfConnection;
  'connectionRecording.get': ConnectionRecording;
  'connectionRecording.muxJson': string;
  'connectionRecording.audioUrl': string;
  'connectionRecording.videoUrl': string;
  /** `$select` may drop properties: records are partial then. */
  'management.channelRecordings.list': ODataListResult<Partial<ManagementChannelRecording>>;
  'management.channelRecording.get': Partial<ManagementChannelRecording>;
  'management.connectionRecordings.list': ODataListResult<Partial<ConnectionRecording>>;
  'management.connectionRecording.get': Partial<ConnectionRecording>;
  'management.connectionRecording.url': string;
  'management.connectionRecording.audioUrl': string;
  'management.connectionRecording.videoUrl': string;
  'storage.usedSize': number;
  'storage.usedSize.application': number;
  'media.recordingTarget': RecordingTarget;
}>;

type ParamsOf<K extends RecordingQueryKind> = Static<TObject<(typeof RECORDING_QUERY_PARAMS)[K]>>;
export type RecordingQueryOf<K extends RecordingQueryKind> = { kind: K } & ParamsOf<K>;
export type RecordingQuery = { [K in RecordingQueryKind]: RecordingQueryOf<K> }[RecordingQueryKind];

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export const RECORDING_COMMAND_PARAMS = {
  /** PATCH C/recordings/{r} with a channel recording patch (`expiryTimestamp`, date-time or null: never). */
  'channelRecording.update': { ...channelRecordingParams, patch: ChannelRecordingPatch },
  /**
   * DELETE C/recordings/{r}; also DELETE /ChannelRecordings/{a}/{ch}/{r} of interface B. Marks the
   * recording and its connection recordings deleted (`deletedOn`, `deletedBy`); when the
   * recording's `deleteFiles` is true its files are removed. Deleting a deleted recording is a no-op.
   */
  'channelRecording.delete': channelRecordingParams,
} as const satisfies Record<string, TProperties>;

export type RecordingCommandKind = keyof typeof RECORDING_COMMAND_PARAMS;
export type RecordingCommandOf<K extends RecordingCommandKind> = { kind: K } & Static<
  TObject<(typeof RECORDING_COMMAND_PARAMS)[K]>
>;
export type RecordingCommand = { [K in RecordingCommandKind]: RecordingCommandOf<K> }[RecordingCommandKind];
