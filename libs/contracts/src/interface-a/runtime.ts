/**
 * Interface A (runtime admin API) records of service-spec.md section 2.A: message and Problem
 * bodies, snapshots and info records, media servers, the application environment and connection info.
 *
 * Response records list every field as required (the service always writes each key); values
 * that can be unknown or unset (aliases, tags, optional ids) are `|null`. Counts are non-negative
 * integers. See record-schema.ts for the export pattern.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  Count,
  DateTime,
  MESSAGE_MAX_LENGTH,
  Nullable,
  OptionalNullable,
  ShortText,
  ShortTextList,
  StringEnum,
  StringList,
  Uuid,
  record,
} from './record-schema.js';

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

export const MessageBody = record(
  'MessageBody',
  {
    message: OptionalNullable(Type.String({ maxLength: MESSAGE_MAX_LENGTH }), { description: 'The message text.' }),
    clientTag: OptionalNullable(ShortText(), { description: 'Client tag to use for the sender.' }),
    clientRoles: OptionalNullable(ShortTextList(), { description: 'Client roles to use for the sender.' }),
    deviceId: OptionalNullable(ShortText(), { description: 'Device id to use for the sender.' }),
    deviceAlias: OptionalNullable(ShortText(), { description: 'Device alias to use for the sender.' }),
    userId: OptionalNullable(ShortText(), { description: 'User id to use for the sender.' }),
    userAlias: OptionalNullable(ShortText(), { description: 'User alias to use for the sender.' }),
  },
  'Body of every send-message operation. Every field is optional and nullable; the sender fields set the identity the recipients see.',
);
export type MessageBody = Static<typeof MessageBody>;

/**
 * The Problem body (RFC 9457). The one open object of the catalog: any additional property is
 * allowed (the service adds `code`, `correlationId` and, for validation failures, `errors`).
 * `type`, `title` and `status` are always written by this service; `detail` and `instance` may be absent.
 */
export const ProblemBody = Type.Object(
  {
    type: Type.String({ description: 'URI reference identifying the problem type.' }),
    title: Type.String({ description: 'Short, human-readable summary of the problem type.' }),
    status: Type.Integer({ minimum: 100, maximum: 599, description: 'HTTP status code.' }),
    detail: Type.Optional(Type.String({ description: 'Explanation specific to this occurrence.' })),
    instance: Type.Optional(Type.String({ description: 'URI reference identifying this occurrence.' })),
  },
  {
    $id: 'ProblemBody',
    additionalProperties: Type.Unknown(),
    description:
      'Problem details (RFC 9457) returned by operations that update, kick, delete or send, and by every failure.',
  },
);
export type ProblemBody = Static<typeof ProblemBody>;

// ---------------------------------------------------------------------------------------------
// Snapshots and info records
// ---------------------------------------------------------------------------------------------

// Field groups shared by the per-level records, in the order the records list them.
const connectionCounts = { clientCount: Count(), connectionCount: Count() };
const deviceCounts = { deviceCount: Count(), ...connectionCounts };
const userCounts = { userCount: Count(), ...deviceCounts };
const userIdentity = { id: Type.String(), alias: Nullable(Type.String()) };
const deviceIdentity = { id: Type.String(), userId: Type.String(), alias: Nullable(Type.String()) };

export const ApplicationSnapshot = record(
  'ApplicationSnapshot',
  { id: Type.String({ description: 'Application id.' }), channelCount: Count(), ...userCounts },
  'Live counts of an application.',
);
export type ApplicationSnapshot = Static<typeof ApplicationSnapshot>;

export const ChannelSnapshot = record(
  'ChannelSnapshot',
  { id: Type.String({ description: 'Channel id.' }), ...userCounts },
  'Live counts of a channel.',
);
export type ChannelSnapshot = Static<typeof ChannelSnapshot>;

export const UserInChannelSnapshot = record(
  'UserInChannelSnapshot',
  { ...userIdentity, ...deviceCounts },
  'A user as seen inside one channel.',
);
export type UserInChannelSnapshot = Static<typeof UserInChannelSnapshot>;

export const UserInfo = record(
  'UserInfo',
  { ...userIdentity, deviceCount: Count(), clientCount: Count(), channelCount: Count() },
  'A user of an application, across channels.',
);
export type UserInfo = Static<typeof UserInfo>;

export const DeviceInChannelSnapshot = record(
  'DeviceInChannelSnapshot',
  { ...deviceIdentity, ...connectionCounts },
  'A device as seen inside one channel.',
);
export type DeviceInChannelSnapshot = Static<typeof DeviceInChannelSnapshot>;

export const DeviceInfo = record(
  'DeviceInfo',
  { ...deviceIdentity, clientCount: Count(), channelCount: Count() },
  'A device of a user, across channels.',
);
export type DeviceInfo = Static<typeof DeviceInfo>;

export const ClientInChannelSnapshot = record(
  'ClientInChannelSnapshot',
  { id: Type.String(), userId: Type.String(), deviceId: Type.String(), roles: StringList(), connectionCount: Count() },
  'A client as seen inside one channel.',
);
export type ClientInChannelSnapshot = Static<typeof ClientInChannelSnapshot>;

// The sender identity of a client, as the client and connection records list it.
const senderIdentity = {
  userId: Type.String(),
  userAlias: Nullable(Type.String()),
  deviceId: Type.String(),
  deviceAlias: Nullable(Type.String()),
};

export const ClientInfo = record(
  'ClientInfo',
  {
    id: Type.String(),
    tag: Nullable(Type.String()),
    ...senderIdentity,
    roles: StringList(),
    channelCount: Count(),
  },
  'A registered client, across channels.',
);
export type ClientInfo = Static<typeof ClientInfo>;

// ---------------------------------------------------------------------------------------------
// Media servers
// ---------------------------------------------------------------------------------------------

/** Decision (the spec does not show `computer`'s fields): the host facts an operator needs to place load. */
export const MediaServerComputer = record(
  'MediaServerComputer',
  {
    hostName: Type.String(),
    ipAddresses: StringList({ description: 'Addresses the media server is reachable at.' }),
    processorCount: Count(),
    memoryBytes: Count({ description: 'Physical memory in bytes.' }),
    region: Nullable(Type.String(), { description: 'Deployment region, when configured.' }),
    version: Nullable(Type.String(), { description: 'Media server software version.' }),
  },
  'Host facts of a media server.',
);
export type MediaServerComputer = Static<typeof MediaServerComputer>;

export const MediaServer = record(
  'MediaServer',
  {
    id: Type.String(),
    active: Type.Boolean({ description: 'true: enabled (takes new connections); false: disabled.' }),
    applications: StringList({
      description:
        'Ids of the applications that have connections on this media server (decision: the spec does not show the element shape).',
    }),
    computer: MediaServerComputer,
  },
  'A registered media server.',
);
export type MediaServer = Static<typeof MediaServer>;

export const MediaServerStatistics = record(
  'MediaServerStatistics',
  {
    mediaServerId: Uuid(),
    pendingConnections: Count(),
    activeConnections: Count(),
    totalClosedConnections: Count(),
    totalFailedConnections: Count(),
    durationFailedConnections: Type.Number({
      minimum: 0,
      description: 'Total duration of failed connections, in seconds.',
    }),
    durationSeconds: Type.Number({ minimum: 0, description: 'Total duration of connections, in seconds.' }),
  },
  'Connection statistics of a media server.',
);
export type MediaServerStatistics = Static<typeof MediaServerStatistics>;

// ---------------------------------------------------------------------------------------------
// Application environment
// ---------------------------------------------------------------------------------------------

/** Decision (element fields not shown): one element shape for all six server lists. */
export const EnvironmentServer = record(
  'EnvironmentServer',
  {
    id: Type.String(),
    region: Nullable(Type.String()),
    version: Nullable(Type.String()),
    addresses: StringList({ description: 'Addresses or URLs the instance is reachable at.' }),
    active: Type.Boolean(),
    lastHeartbeat: Nullable(DateTime(), { description: 'Time of the last heartbeat seen from the instance.' }),
  },
  'A service instance of the deployment (gateway, media server, connector, recording monitor, muxer or mover).',
);
export type EnvironmentServer = Static<typeof EnvironmentServer>;

export const ApplicationEnvironment = record(
  'ApplicationEnvironment',
  {
    externalAdminUrl: Type.String(),
    externalSyncUrl: Type.String(),
    externalSipAuthority: Nullable(Type.String(), { description: 'null when no SIP connector is configured.' }),
    gateways: Type.Array(EnvironmentServer),
    mediaServers: Type.Array(EnvironmentServer),
    connectors: Type.Array(EnvironmentServer),
    recordingMonitors: Type.Array(EnvironmentServer),
    recordingMuxers: Type.Array(EnvironmentServer),
    recordingMovers: Type.Array(EnvironmentServer),
  },
  'The deployment an application runs on.',
);
export type ApplicationEnvironment = Static<typeof ApplicationEnvironment>;

// ---------------------------------------------------------------------------------------------
// Connection info
// ---------------------------------------------------------------------------------------------

export const CONNECTION_STATES = [
  'new',
  'initializing',
  'connecting',
  'connected',
  'failing',
  'failed',
  'closing',
  'closed',
] as const;
export const ConnectionState = StringEnum(CONNECTION_STATES, { description: 'Connection state.' });
export type ConnectionState = Static<typeof ConnectionState>;

export const CONNECTION_TYPES = ['sfu', 'mcu', 'peer'] as const;
export const ConnectionType = StringEnum(CONNECTION_TYPES, { description: 'Connection type.' });
export type ConnectionType = Static<typeof ConnectionType>;

export const STREAM_DIRECTIONS = ['sendrecv', 'sendonly', 'recvonly', 'inactive'] as const;
export const StreamDirection = StringEnum(STREAM_DIRECTIONS, { description: 'Media direction, from the client side.' });
export type StreamDirection = Static<typeof StreamDirection>;

export const ConnectionError = record(
  'ConnectionError',
  { code: Type.String({ description: 'Machine-readable error code.' }), message: Type.String() },
  'Why a connection failed.',
);
export type ConnectionError = Static<typeof ConnectionError>;

/**
 * Decision: a media stream is described by its negotiated state, not by its statistics (those arrive as stats events).
 */
const streamIdentity = { id: Type.String(), tag: Nullable(Type.String()), direction: StreamDirection };

export const MediaStreamInfo = record(
  'MediaStreamInfo',
  {
    ...streamIdentity,
    muted: Type.Boolean({ description: 'The local side has muted the stream.' }),
    disabled: Type.Boolean({ description: 'Sending on the stream is disabled.' }),
    format: Nullable(Type.String(), { description: 'Negotiated format, e.g. `opus/48000/2` or `VP8/90000`.' }),
    width: Nullable(Count(), { description: 'Frame width in pixels (video only).' }),
    height: Nullable(Count(), { description: 'Frame height in pixels (video only).' }),
    frameRate: Nullable(Type.Number({ minimum: 0 }), { description: 'Frames per second (video only).' }),
  },
  'An audio or video stream of a connection.',
);
export type MediaStreamInfo = Static<typeof MediaStreamInfo>;

export const DataStreamInfo = record(
  'DataStreamInfo',
  {
    ...streamIdentity,
    channelLabels: StringList({ description: 'Labels of the data channels of the stream.' }),
  },
  'The data stream of a connection.',
);
export type DataStreamInfo = Static<typeof DataStreamInfo>;

export const TransportInfo = record(
  'TransportInfo',
  {
    id: Type.String(),
    protocol: Nullable(StringEnum(['udp', 'tcp', 'tls']), {
      description: 'Transport protocol of the selected candidate pair.',
    }),
    localAddress: Nullable(Type.String(), { description: '`host:port` of the local candidate.' }),
    remoteAddress: Nullable(Type.String(), { description: '`host:port` of the remote candidate.' }),
    relayed: Type.Boolean({ description: 'The selected candidate pair goes through a TURN relay.' }),
    state: Nullable(Type.String(), { description: 'ICE/DTLS state of the transport.' }),
  },
  'A transport (candidate pair) of a connection.',
);
export type TransportInfo = Static<typeof TransportInfo>;

export const MediaFormatInfo = record(
  'MediaFormatInfo',
  {
    name: Type.String({ description: 'Codec name, e.g. `opus`, `VP8`, `H264`.' }),
    clockRate: Count(),
    channelCount: Nullable(Count(), { description: 'Audio channels (audio only).' }),
    parameters: Nullable(Type.String(), { description: 'Format parameters (`fmtp`), when any.' }),
  },
  'A media format a connection supports.',
);
export type MediaFormatInfo = Static<typeof MediaFormatInfo>;

export const ConnectionInfo = record(
  'ConnectionInfo',
  {
    id: Type.String(),
    isSip: Type.Boolean(),
    applicationId: Type.String(),
    channelId: Type.String(),
    ...senderIdentity,
    clientId: Type.String(),
    clientTag: Nullable(Type.String()),
    clientRoles: StringList(),
    clientProtocol: Nullable(Type.String(), { description: 'Protocol the client speaks (e.g. `websocket`, `sip`).' }),
    externalId: Nullable(Type.String()),
    state: ConnectionState,
    tag: Nullable(Type.String()),
    type: ConnectionType,
    recording: Type.Boolean(),
    recordingTag: Nullable(Type.String()),
    error: Nullable(ConnectionError, { description: 'Set when the connection failed.' }),
    mediaId: Nullable(Type.String()),
    remoteConnectionId: Nullable(Type.String(), { description: 'The other side of a peer connection.' }),
    remoteMediaId: Nullable(Type.String()),
    audioStream: Nullable(MediaStreamInfo),
    audioStreams: Type.Array(MediaStreamInfo),
    videoStream: Nullable(MediaStreamInfo),
    videoStreams: Type.Array(MediaStreamInfo),
    dataStream: Nullable(DataStreamInfo),
    transports: Type.Array(TransportInfo),
    hasAudio: Type.Boolean(),
    hasVideo: Type.Boolean(),
    hasData: Type.Boolean(),
    localAudioMuted: Type.Boolean(),
    localVideoMuted: Type.Boolean(),
    localAudioUnmuteDisabled: Type.Boolean(),
    localVideoUnmuteDisabled: Type.Boolean(),
    localAudioDisabled: Type.Boolean(),
    localVideoDisabled: Type.Boolean(),
    remoteAudioDisabled: Type.Boolean(),
    remoteVideoDisabled: Type.Boolean(),
    audioDirection: StreamDirection,
    videoDirection: StreamDirection,
    dataDirection: StreamDirection,
    audioFormats: Type.Array(MediaFormatInfo),
    videoFormats: Type.Array(MediaFormatInfo),
  },
  'A connection of a client inside a channel, as last reported.',
);
export type ConnectionInfo = Static<typeof ConnectionInfo>;
