/**
 * The recording contract: what admin-gateway (interface A), management-api (interface B) and the
 * media server side ask `recording-service`, and the recording handshake with the media servers.
 *
 * - `recording-service.v1.query`   every read: one subject, a `kind` per HTTP route (1:1), the
 *                                  result of each kind fixed by `RecordingQueries`.
 * - `recording-service.v1.command` the writes: expiry patch and delete; answers `null`.
 *
 * Request bodies: `{ scope, query: { kind, ...params } }` and `{ scope, command: { kind, ...params } }`,
 * validated by the service with `parseRecordingQueryRequest` / `parseRecordingCommandRequest`.
 * Errors cross NATS as DomainError codes: `NotFound` for a recording of another organization
 * (exactly like a missing one) and for a string read whose file does not exist (yet);
 * `ValidationFailed` (details name the field, or the OData option `$filter`, `$top`, ...) for bad
 * parameters.
 *
 * Tenancy: a recording belongs to the organization named by the domain events that created it
 * (`DomainEvent.organizationId`). A non-operator scope sees only its organization's recordings;
 * an operator scope (`operator: true`) sees every organization's.
 *
 * Lists (interface A): ordered by `startTimestamp` descending, then `id` ascending.
 * `timestampMin`/`timestampMax` are Unix seconds, inclusive, compared with `startTimestamp`;
 * `skip` defaults to 0, `take` to 100 (at most 1000). Counts take only the two timestamps.
 * Soft-deleted recordings (`deleted: true`, files removed) stay readable and listed.
 *
 * Interface B lists take the raw `$` options (`$filter`, `$orderby`, `$top`, `$skip`, `$count`,
 * `$select`) as strings, exactly as received; `$filter` works on every scalar property of the
 * record, date-time properties compare with OData date-time literals. Without `$orderby` the order
 * is that of interface A. Answers are `{ value, '@odata.count'? }`; string reads and sizes are bare
 * values (management-api wraps them in `{ value }`).
 *
 * Files (the media server handshake): for every recorded connection the media server writes, after
 * the connection recording stopped, `<directory>/<audioBase>.<ext>` and `<directory>/<videoBase>.<ext>`
 * (any extension ffmpeg reads, e.g. `.ogg`/`.opus`/`.mka` and `.webm`/`.mkv`), where `directory`,
 * `audioBase` and `videoBase` come from the `media.recordingTarget` query
 * (`<RECORDINGS_DIR>/<applicationId>/<channelId>/<channelRecordingId>`,
 * `<connectionRecordingId>.audio`, `<connectionRecordingId>.video`; ids percent-encoded). A file
 * must appear complete: write it under another name (e.g. ending `.part`) and rename it. The service
 * waits for the files up to `RECORDINGS_INGEST_TIMEOUT_MS` (then `ingested` stays false), muxes the
 * channel recording, moves the files to the storage target and emits the `*.ready` events.
 *
 * Events the service emits (`*.ready`, `channel.recording.mux.failed` / `move.failed`,
 * `channel.recording.expired`) are written in the transaction of the change they announce and
 * relayed to the event stream from there (Nats-Msg-Id = event id): each is published at least
 * once, also across a NATS outage or a crash, and duplicates of an id within the stream's
 * duplicate window are dropped by JetStream.
 */
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import type { ChannelRecording, ConnectionRecording } from '../interface-a/recordings.js';
import { ChannelRecordingPatch } from '../interface-a/patches.js';
import type { ManagementChannelRecording } from '../interface-b/responses.js';
import { ContractViolation, validator } from '../validation/validate.js';
import type { DomainEvent } from './runtime.js';
import { CallerScope } from './subjects.js';

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

const a = { applicationId: Id() };
const ch = { ...a, channelId: Id() };
const u = { userId: Id() };
const d = { ...u, deviceId: Id() };
const cl = { ...d, clientId: Id() };
const cn = { ...cl, connectionId: Id() };
const r = { ...ch, channelRecordingId: RecordingId() };
const cr = { ...ch, ...cn, connectionRecordingId: RecordingId() };

function kindSchema<K extends string, P extends TProperties>(kind: K, props: P) {
  return Type.Object(
    { kind: Type.Literal(kind), ...props },
    { additionalProperties: false, $id: `RecordingQuery:${kind}` },
  );
}

/**
 * Every query kind, with the interface route it serves (`P` = `/admin/api/v1.0`,
 * `C` = `P/applications/{a}/channels/{ch}`, `UDC` = `users/{u}/devices/{d}/clients/{cl}`).
 */
export const RECORDING_QUERY_PARAMS = {
  // ---- interface A: channel recordings ----
  /** GET P/applications/{a}/recordings */
  'channelRecordings.list': { ...a, ...windowProps },
  /** GET P/applications/{a}/recordings/count */
  'channelRecordings.count': { ...a, ...countProps },
  /** GET C/recordings */
  'channel.recordings.list': { ...ch, ...windowProps },
  /** GET C/recordings/count */
  'channel.recordings.count': { ...ch, ...countProps },
  /** GET C/recordings/{r} (interface A record, with its connection recordings) */
  'channelRecording.get': r,
  /** GET C/recordings/{r}/muxjson; also interface B `.../MuxJson` */
  'channelRecording.muxJson': r,
  /** GET C/recordings/{r}/url; also interface B `.../Url` */
  'channelRecording.url': r,
  /** GET C/recordings/{r}/audiourl; also interface B `.../AudioUrl` */
  'channelRecording.audioUrl': r,
  /** GET C/recordings/{r}/videourl; also interface B `.../VideoUrl` */
  'channelRecording.videoUrl': r,

  // ---- interface A: the 14 connection recording lists ----
  /** GET P/applications/{a}/connectionrecordings */
  'application.connectionRecordings.list': { ...a, ...windowProps },
  /** GET P/applications/{a}/users/{u}/connectionrecordings */
  'user.connectionRecordings.list': { ...a, ...u, ...windowProps },
  /** GET P/applications/{a}/users/{u}/devices/{d}/connectionrecordings */
  'device.connectionRecordings.list': { ...a, ...d, ...windowProps },
  /** GET P/applications/{a}/UDC/connectionrecordings */
  'client.connectionRecordings.list': { ...a, ...cl, ...windowProps },
  /** GET C/connectionrecordings */
  'channel.connectionRecordings.list': { ...ch, ...windowProps },
  /** GET C/users/{u}/connectionrecordings */
  'channel.user.connectionRecordings.list': { ...ch, ...u, ...windowProps },
  /** GET C/users/{u}/devices/{d}/connectionrecordings */
  'channel.device.connectionRecordings.list': { ...ch, ...d, ...windowProps },
  /** GET C/UDC/connectionrecordings */
  'channel.client.connectionRecordings.list': { ...ch, ...cl, ...windowProps },
  /** GET C/UDC/connections/{cn}/recordings */
  'connection.connectionRecordings.list': { ...ch, ...cn, ...windowProps },
  /** GET C/recordings/{r}/connectionrecordings */
  'channelRecording.connectionRecordings.list': { ...r, ...windowProps },
  /** GET C/recordings/{r}/users/{u}/connectionrecordings */
  'channelRecording.user.connectionRecordings.list': { ...r, ...u, ...windowProps },
  /** GET C/recordings/{r}/users/{u}/devices/{d}/connectionrecordings */
  'channelRecording.device.connectionRecordings.list': { ...r, ...d, ...windowProps },
  /** GET C/recordings/{r}/UDC/connectionrecordings */
  'channelRecording.client.connectionRecordings.list': { ...r, ...cl, ...windowProps },
  /** GET C/recordings/{r}/UDC/connections/{cn}/recordings */
  'channelRecording.connection.connectionRecordings.list': { ...r, ...cn, ...windowProps },

  // ---- interface A: one connection recording ----
  /** GET C/UDC/connections/{cn}/recordings/{cr} */
  'connectionRecording.get': cr,
  /** GET C/UDC/connections/{cn}/recordings/{cr}/muxjson */
  'connectionRecording.muxJson': cr,
  /** GET C/UDC/connections/{cn}/recordings/{cr}/audiourl */
  'connectionRecording.audioUrl': cr,
  /** GET C/UDC/connections/{cn}/recordings/{cr}/videourl */
  'connectionRecording.videoUrl': cr,

  // ---- interface B (management-api) ----
  /** GET /ChannelRecordings/{applicationId}?$filter&$orderby&$top&$skip&$count&$select */
  'management.channelRecordings.list': { ...a, options: Type.Optional(ODataOptions) },
  /** GET /ChannelRecordings/{a}/{ch}/{r}?$select (the string reads use the `channelRecording.*` kinds) */
  'management.channelRecording.get': { ...r, options: Type.Optional(ODataOptions) },
  /** GET /ConnectionRecordings/{applicationId}?$filter&$orderby&$top&$skip&$count&$select */
  'management.connectionRecordings.list': { ...a, options: Type.Optional(ODataOptions) },
  /** GET /ConnectionRecordings/{a}/{cr}?$select */
  'management.connectionRecording.get': {
    ...a,
    connectionRecordingId: RecordingId(),
    options: Type.Optional(ODataOptions),
  },
  /**
   * GET /ConnectionRecordings/{a}/{cr}/Url: the URL of the muxed file of the channel recording the connection recording
   * belongs to.
   */
  'management.connectionRecording.url': { ...a, connectionRecordingId: RecordingId() },
  /** GET /ConnectionRecordings/{a}/{cr}/AudioUrl */
  'management.connectionRecording.audioUrl': { ...a, connectionRecordingId: RecordingId() },
  /** GET /ConnectionRecordings/{a}/{cr}/VideoUrl */
  'management.connectionRecording.videoUrl': { ...a, connectionRecordingId: RecordingId() },
  /** GET /RecordingStorage/UsedSize: bytes of the files of the caller's organization (not deleted). */
  'storage.usedSize': {},
  /** GET /RecordingStorage/UsedSize/{applicationId} */
  'storage.usedSize.application': a,

  // ---- media server side ----
  /**
   * Where the media server writes the files of the connection's current (or latest) connection
   * recording. Operator scope, or the organization of the recording.
   */
  'media.recordingTarget': { ...ch, connectionId: Id() },
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

/** Result of each query kind. */
export interface RecordingQueryResults {
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
}

type Check<T extends Record<RecordingQueryKind, unknown>> = T;
export type _RecordingQueryResultsAreComplete = Check<RecordingQueryResults>;

type ParamsOf<K extends RecordingQueryKind> = Static<TObject<(typeof RECORDING_QUERY_PARAMS)[K]>>;
export type RecordingQueryOf<K extends RecordingQueryKind> = { kind: K } & ParamsOf<K>;
export type RecordingQuery = { [K in RecordingQueryKind]: RecordingQueryOf<K> }[RecordingQueryKind];
export type RecordingQueryResult<K extends RecordingQueryKind> = RecordingQueryResults[K];

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export const RECORDING_COMMAND_PARAMS = {
  /** PATCH C/recordings/{r} with a channel recording patch (`expiryTimestamp`, date-time or null: never). */
  'channelRecording.update': { ...r, patch: ChannelRecordingPatch },
  /**
   * DELETE C/recordings/{r}; also DELETE /ChannelRecordings/{a}/{ch}/{r} of interface B. Marks the
   * recording and its connection recordings deleted (`deletedOn`, `deletedBy`); when the
   * recording's `deleteFiles` is true its files are removed. Deleting a deleted recording is a no-op.
   */
  'channelRecording.delete': r,
} as const satisfies Record<string, TProperties>;

export type RecordingCommandKind = keyof typeof RECORDING_COMMAND_PARAMS;
export type RecordingCommandOf<K extends RecordingCommandKind> = { kind: K } & Static<
  TObject<(typeof RECORDING_COMMAND_PARAMS)[K]>
>;
export type RecordingCommand = { [K in RecordingCommandKind]: RecordingCommandOf<K> }[RecordingCommandKind];

// ---------------------------------------------------------------------------------------------
// Request validation
// ---------------------------------------------------------------------------------------------

export interface RecordingQueryRequest {
  scope: CallerScope;
  query: RecordingQuery;
}
export interface RecordingCommandRequest {
  scope: CallerScope;
  command: RecordingCommand;
}

const querySchemas = Object.fromEntries(
  Object.entries(RECORDING_QUERY_PARAMS).map(([kind, props]) => [kind, kindSchema(kind, props)]),
);
const commandSchemas = Object.fromEntries(
  Object.entries(RECORDING_COMMAND_PARAMS).map(([kind, props]) => [kind, kindSchema(kind, props)]),
);
const envelope = (body: 'query' | 'command') =>
  Type.Object(
    { scope: CallerScope, [body]: Type.Object({ kind: Type.String() }, { additionalProperties: true }) },
    { additionalProperties: false },
  );
const queryEnvelope = validator(envelope('query'), 'RecordingQueryRequest');
const commandEnvelope = validator(envelope('command'), 'RecordingCommandRequest');

function parseKind(
  value: unknown,
  body: 'query' | 'command',
  schemas: Record<string, TObject>,
  env: typeof queryEnvelope,
) {
  const outer = env.parse(value) as Record<string, unknown>;
  const inner = outer[body] as { kind: string };
  const schema = schemas[inner.kind];
  if (!schema)
    throw new ContractViolation(env.name, [
      { field: `${body}.kind`, message: `unknown ${body} kind "${String(inner.kind).slice(0, 64)}"` },
    ]);
  try {
    validator(schema, `${body} ${inner.kind}`).parse(inner);
  } catch (e) {
    if (e instanceof ContractViolation)
      throw new ContractViolation(
        e.contract,
        e.errors.map((x) => ({ ...x, field: x.field ? `${body}.${x.field}` : body })),
      );
    throw e;
  }
  return outer;
}

/** Validates a query request: the envelope, the kind, and the kind's parameters (unknown fields rejected). */
export function parseRecordingQueryRequest(value: unknown): RecordingQueryRequest {
  return parseKind(value, 'query', querySchemas, queryEnvelope) as unknown as RecordingQueryRequest;
}

export function parseRecordingCommandRequest(value: unknown): RecordingCommandRequest {
  return parseKind(value, 'command', commandSchemas, commandEnvelope) as unknown as RecordingCommandRequest;
}

// ---------------------------------------------------------------------------------------------
// The channel config's part in recording (asked by recording-service, answered by management-api)
// ---------------------------------------------------------------------------------------------

/**
 * `management-api.v1.channel-configs.recording` (request/reply, queue group `management-api`):
 * the recording fields of the ONE channel config that governs a channel of an application, chosen
 * with `selectChannelConfig` (messaging/webhooks.ts, the rule the webhooks follow).
 * Request `{ applicationId, channelId }`; response `ChannelRecordingSettings`: `channelConfigId`
 * null and the defaults (`recordingEnabled` null, `muxDisabled` false) when no channel config
 * matches; an unknown application id is the WireError `NotFound`.
 *
 * recording-service asks it when a channel recording opens: `muxDisabled: true` (the config's
 * `recordingManagementOverride.muxDisabled`) opens it with `muxEnabled: false`, so it is not muxed
 * (its connection files are still moved and announced); otherwise `RECORDINGS_MUX_ENABLED` decides.
 * When management-api does not answer, the service default applies (a recording is never lost for
 * want of its config).
 */
export const ChannelRecordingSettingsSubject = 'management-api.v1.channel-configs.recording' as const;

export const ChannelRecordingSettingsRequest = Type.Object(
  { applicationId: Id(), channelId: Id() },
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

export interface RecordingRequestMap {
  'recording-service.v1.query': { request: RecordingQueryRequest; response: unknown };
  'recording-service.v1.command': { request: RecordingCommandRequest; response: null };
  'management-api.v1.channel-configs.recording': {
    request: ChannelRecordingSettingsRequest;
    response: ChannelRecordingSettings;
  };
}

declare module './subjects.js' {
  interface RequestMap extends RecordingRequestMap {}
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
