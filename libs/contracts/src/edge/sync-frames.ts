/**
 * The `/sync` WebSocket frame protocol of the client edge: request, result, error and push frames
 * (narrative: docs/sync-protocol.md; machine-readable: the AsyncAPI document of sync-asyncapi.ts).
 * Results are in sync-results.ts, pushes in sync-pushes.ts. The first request must be `register`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ConnectionError, ConnectionState, ConnectionType, StreamDirection } from '../interface-a/runtime.js';
import { Nullable, OptionalNullable, StringEnum, record } from '../interface-a/record-schema.js';
import { CHECKED_SEPARATELY_KEYWORD } from '../validation/well-formed.js';
import type { ServerPush } from '../messaging/runtime-push.js';
import { SyncServerPush } from './sync-pushes.js';
import {
  SyncConnectionAnswerData,
  SyncConnectionCandidatesData,
  SyncConnectionOfferData,
  SyncConnectionRelayData,
  SyncConnectionSubscribeData,
} from './sync-signalling.js';

export const SYNC_PATH = '/sync';
export const SYNC_PROTOCOL_VERSION = 2;

// ---------------------------------------------------------------------------------------------
// Close codes and error codes
// ---------------------------------------------------------------------------------------------

/** WebSocket close codes the gateway uses (4000-4999 are application codes). */
export const SYNC_CLOSE_CODES = {
  /** The client unregistered (or closed) normally. */
  normal: 1000,
  /** A frame larger than the gateway's maximum frame size (set by the WebSocket layer). */
  frameTooLarge: 1009,
  /** The gateway is shutting down; reconnect (to any replica) and register again. */
  serviceRestart: 1012,
  /** The token is malformed, tampered with, or signed with another secret. */
  tokenInvalid: 4001,
  /** The token has expired (or is not valid yet). */
  tokenExpired: 4002,
  /** The token's application is unknown, disabled, or not the one the client asked for. */
  applicationRefused: 4003,
  /** No valid `register` within the register timeout. */
  registerTimeout: 4008,
  /** Another socket registered the same client (application, user, device, client ids). */
  replaced: 4009,
  /** The server unregistered the client (e.g. kicked out of the application). */
  unregistered: 4010,
  /** The client does not read its frames: the gateway's send buffer for the socket overflowed. */
  slowConsumer: 4029,
} as const;
export type SyncCloseCode = (typeof SYNC_CLOSE_CODES)[keyof typeof SYNC_CLOSE_CODES];

export const SYNC_ERROR_CODES = [
  // frame level
  'InvalidFrame',
  'TooManyRequests',
  // session level
  'NotRegistered',
  'AlreadyRegistered',
  'TokenInvalid',
  'TokenExpired',
  'ApplicationRefused',
  // rules of the edge
  'Forbidden',
  'NotJoined',
  'AlreadyJoined',
  'UnknownConnection',
  'InvalidTransition',
  'UnmuteDisabled',
  // answers of the runtime registry, passed through
  'ValidationFailed',
  'NotFound',
  'Conflict',
  'Unauthorized',
  'PayloadTooLarge',
  'Unavailable',
  'Timeout',
  'Internal',
] as const;
export type SyncErrorCode = (typeof SYNC_ERROR_CODES)[number];

// ---------------------------------------------------------------------------------------------
// Request frames
// ---------------------------------------------------------------------------------------------

export const SYNC_REQUEST_TYPES = [
  'register',
  'join',
  'leave',
  'connection.open',
  'connection.state',
  'connection.update',
  'connection.close',
  'connection.offer',
  'connection.subscribe',
  'connection.answer',
  'connection.candidates',
  'connection.relay',
  'stats',
  'message',
  'client.update',
  'unregister',
  'ping',
] as const;
export type SyncRequestType = (typeof SYNC_REQUEST_TYPES)[number];

const FrameId = Type.Union(
  [Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })],
  {
    description: 'Chosen by the client; echoed in the answer. Unique among the requests in flight.',
  },
);
const EntityId = (description: string) =>
  Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description });
const Text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });

export const SyncRequestFrame = record(
  'SyncRequestFrame',
  {
    id: FrameId,
    type: StringEnum(SYNC_REQUEST_TYPES),
    // Checked, text included, by the schema of its `type` (sync.server.ts), which names its fields.
    data: Type.Optional(
      Type.Unknown({
        description: 'Parameters of the request; the schema depends on `type`.',
        [CHECKED_SEPARATELY_KEYWORD]: true,
      }),
    ),
  },
  'A request from the client. Answered by one `result` or `error` frame with the same id.',
);
export type SyncRequestFrame = Static<typeof SyncRequestFrame>;

export const SyncRegisterData = record(
  'SyncRegisterData',
  {
    token: Type.String({
      minLength: 1,
      maxLength: 16384,
      description: 'Client token of type `register` (http-contract.md, "Client edge").',
    }),
    applicationId: Type.Optional(EntityId('When given, the token must be for this application (4003 otherwise).')),
    userAlias: OptionalNullable(Text(256)),
    deviceAlias: OptionalNullable(Text(256)),
    tag: OptionalNullable(Text(256)),
    protocol: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Client protocol reported in connection infos (default `websocket`).',
      }),
    ),
  },
  'Registers the client. Must be the first request of a socket.',
);
export type SyncRegisterData = Static<typeof SyncRegisterData>;

export const SyncJoinData = record(
  'SyncJoinData',
  {
    channelId: EntityId('The channel to join; the client must hold a claim for it.'),
    token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16384,
        description:
          'A `join` token for the same client carrying a fresh set of channel claims; replaces the register token claims.',
      }),
    ),
  },
  'Joins a channel.',
);
export type SyncJoinData = Static<typeof SyncJoinData>;

export const SyncLeaveData = record(
  'SyncLeaveData',
  { channelId: EntityId('The channel to leave.') },
  'Leaves a channel; its connections are closed.',
);
export type SyncLeaveData = Static<typeof SyncLeaveData>;

const formats = Type.Array(Text(128), {
  maxItems: 32,
  description:
    'Media formats the client supports: strings `<codec>/<clock rate>[/<channels>]` as in SDP rtpmap, ' +
    'e.g. `opus/48000/2`, `VP8/90000`.',
});

export const SyncAudioStream = record(
  'SyncAudioStream',
  {
    direction: StreamDirection,
    muted: Type.Optional(Type.Boolean()),
    disabled: Type.Optional(Type.Boolean()),
    formats: Type.Optional(formats),
  },
  'The audio stream of a connection.',
);
export const SyncVideoStream = record(
  'SyncVideoStream',
  {
    direction: StreamDirection,
    muted: Type.Optional(Type.Boolean()),
    disabled: Type.Optional(Type.Boolean()),
    formats: Type.Optional(formats),
    maxPixelCount: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Largest frame sent or received, in pixels.',
      }),
    ),
    width: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Width of the frames currently sent or received, in pixels.',
      }),
    ),
    height: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Height of the frames currently sent or received, in pixels.',
      }),
    ),
    frameRate: Type.Optional(Type.Number({ minimum: 0, description: 'Frames per second currently sent or received.' })),
  },
  'The video stream of a connection.',
);
export const SyncDataStream = record(
  'SyncDataStream',
  { direction: StreamDirection, channelLabels: Type.Optional(Type.Array(Text(128), { maxItems: 32 })) },
  'The data stream of a connection.',
);
export const SyncStreams = record(
  'SyncStreams',
  {
    audio: OptionalNullable(SyncAudioStream),
    video: OptionalNullable(SyncVideoStream),
    data: OptionalNullable(SyncDataStream),
  },
  'The streams of a connection (absent or null: no such stream).',
);
export type SyncStreams = Static<typeof SyncStreams>;

export const SyncConnectionOpenData = record(
  'SyncConnectionOpenData',
  {
    channelId: EntityId('A channel the client has joined.'),
    connectionId: Type.Optional(EntityId('Chosen by the client; the gateway makes a UUID when absent.')),
    type: ConnectionType,
    tag: OptionalNullable(Text(256)),
    streams: SyncStreams,
    remoteConnectionId: OptionalNullable(
      EntityId('The other side of a peer connection, or the upstream a downstream sfu connection receives.'),
    ),
  },
  'Opens a connection (state `new`) in a joined channel.',
);
export type SyncConnectionOpenData = Static<typeof SyncConnectionOpenData>;

export const SyncConnectionStateData = record(
  'SyncConnectionStateData',
  { connectionId: EntityId('The connection.'), state: ConnectionState, error: OptionalNullable(ConnectionError) },
  'Moves a connection to its next state; the transition must be allowed.',
);
export type SyncConnectionStateData = Static<typeof SyncConnectionStateData>;

export const SyncConnectionUpdateData = record(
  'SyncConnectionUpdateData',
  {
    connectionId: EntityId('The connection.'),
    localAudioMuted: Type.Optional(Type.Boolean()),
    localVideoMuted: Type.Optional(Type.Boolean()),
    tag: OptionalNullable(Text(256)),
    streams: Type.Optional(SyncStreams),
  },
  'Changes the local mute flags, tag or streams of a connection. Unmuting is refused while unmuting is disabled.',
);
export type SyncConnectionUpdateData = Static<typeof SyncConnectionUpdateData>;

export const SyncConnectionCloseData = record(
  'SyncConnectionCloseData',
  { connectionId: EntityId('The connection.') },
  'Closes a connection.',
);
export type SyncConnectionCloseData = Static<typeof SyncConnectionCloseData>;

export const SyncStatsData = record(
  'SyncStatsData',
  {
    connectionId: Type.Optional(EntityId('Stats of this connection; absent: stats of the client.')),
    stats: Type.Record(Type.String({ maxLength: 128 }), Type.Unknown(), {
      description: 'Statistics as reported by the client SDK.',
    }),
  },
  'Reports statistics of the client or of one of its connections.',
);
export type SyncStatsData = Static<typeof SyncStatsData>;

export const SyncMessageRecipient = record(
  'SyncMessageRecipient',
  {
    userId: Type.Optional(EntityId('Target user.')),
    deviceId: Type.Optional(EntityId('Target device.')),
    clientId: Type.Optional(EntityId('Target client.')),
  },
  'Narrows a client message to one user, device or client.',
);
export const SyncMessageData = record(
  'SyncMessageData',
  {
    channelId: EntityId('A joined channel: the message goes to its members (or the recipient of `to` in it).'),
    message: Text(65536, 'The message text.'),
    to: Type.Optional(SyncMessageRecipient),
  },
  'Sends a client message. The sender fields are the registered identity of the client.',
);
export type SyncMessageData = Static<typeof SyncMessageData>;

export const SyncClientUpdateData = record(
  'SyncClientUpdateData',
  {
    userAlias: OptionalNullable(Text(256)),
    deviceAlias: OptionalNullable(Text(256)),
    tag: OptionalNullable(Text(256)),
  },
  'Changes the aliases or tag of the client.',
);
export type SyncClientUpdateData = Static<typeof SyncClientUpdateData>;

export const SyncEmptyData = record('SyncEmptyData', {}, 'No parameters.');
export type SyncEmptyData = Static<typeof SyncEmptyData>;

/** The `data` schema of each request type (`unregister` and `ping` take none: `data` absent or `{}`). */
export const SYNC_REQUEST_DATA = {
  register: SyncRegisterData,
  join: SyncJoinData,
  leave: SyncLeaveData,
  'connection.open': SyncConnectionOpenData,
  'connection.state': SyncConnectionStateData,
  'connection.update': SyncConnectionUpdateData,
  'connection.close': SyncConnectionCloseData,
  'connection.offer': SyncConnectionOfferData,
  'connection.subscribe': SyncConnectionSubscribeData,
  'connection.answer': SyncConnectionAnswerData,
  'connection.candidates': SyncConnectionCandidatesData,
  'connection.relay': SyncConnectionRelayData,
  stats: SyncStatsData,
  message: SyncMessageData,
  'client.update': SyncClientUpdateData,
  unregister: SyncEmptyData,
  ping: SyncEmptyData,
} as const satisfies Record<SyncRequestType, TSchema>;

export type SyncRequestDataOf<T extends SyncRequestType> = Static<(typeof SYNC_REQUEST_DATA)[T]>;

// ---------------------------------------------------------------------------------------------
// Server frames
// ---------------------------------------------------------------------------------------------

export const SyncErrorBody = record(
  'SyncErrorBody',
  {
    code: StringEnum(SYNC_ERROR_CODES),
    message: Type.String(),
    details: Type.Optional(
      Type.Array(
        Type.Object({ field: Type.Optional(Type.String()), message: Type.String() }, { additionalProperties: false }),
      ),
    ),
  },
  'What went wrong; `details` names each offending field.',
);
export type SyncErrorBody = Static<typeof SyncErrorBody>;

export const SyncResultFrame = record(
  'SyncResultFrame',
  { type: Type.Literal('result'), id: FrameId, data: Type.Unknown() },
  'The answer to a request.',
);
export const SyncErrorFrame = record(
  'SyncErrorFrame',
  {
    type: Type.Literal('error'),
    id: Nullable(FrameId, { description: 'The request refused; null when the frame could not be read.' }),
    error: SyncErrorBody,
  },
  'A refused request, or an unreadable frame (id null).',
);
export const SyncPushFrame = record(
  'SyncPushFrame',
  {
    type: Type.Literal('push'),
    push: SyncServerPush,
  },
  'Something the server sends on its own: messages, kicks, settings, claim and client updates, unregistration, ' +
    'media states and offers, remote upstreams.',
);

export interface SyncResultFrameOf<T = unknown> {
  type: 'result';
  id: string | number;
  data: T;
}
export interface SyncErrorFrameOf {
  type: 'error';
  id: string | number | null;
  error: SyncErrorBody;
}
export interface SyncPushFrameOf {
  type: 'push';
  push: ServerPush;
}
export type SyncServerFrame = SyncResultFrameOf | SyncErrorFrameOf | SyncPushFrameOf;
