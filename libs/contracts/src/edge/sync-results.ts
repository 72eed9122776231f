/**
 * Schemas of the `data` of each `/sync` result frame. `SyncResults` (the TS type the gateway answers
 * with) is derived from them, so what the gateway sends and what the AsyncAPI document says are one.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import { ChannelSnapshot, ConnectionState, ConnectionType } from '../interface-a/runtime.js';
import { Count, DateTime, Nullable, record } from '../interface-a/record-schema.js';
import { ChannelClaim } from '../interface-b/channel-claim.js';
import type { SyncRequestType } from './sync-frames.js';
import { SyncEffectiveSettings, SyncRemoteUpstream } from './sync-pushes.js';
import { SyncAnswerDescription, SyncOfferDescription } from './sync-signalling.js';

const connectionId = Type.String({ description: 'The connection.' });
const channelId = Type.String({ description: 'The channel.' });

export const SyncIceServer = record(
  'SyncIceServer',
  {
    urls: Type.Array(Type.String(), { description: '`stun:` or `turn:` URLs.' }),
    username: Type.Optional(Type.String({ description: 'TURN only: `<expiry unix seconds>:<clientId>`.' })),
    credential: Type.Optional(Type.String({ description: 'TURN only: valid until the expiry of `username`.' })),
  },
  'One ICE server, as RTCIceServer.',
);
export type SyncIceServer = Static<typeof SyncIceServer>;

export const SyncConnectionState = record(
  'SyncConnectionState',
  {
    connectionId,
    channelId,
    type: ConnectionType,
    state: ConnectionState,
    localAudioMuted: Type.Boolean({ description: 'Muted by the client itself.' }),
    localVideoMuted: Type.Boolean({ description: 'Muted by the client itself.' }),
    mediaServerId: Nullable(Type.String(), { description: 'Where the connection is placed; null for `peer`.' }),
    settings: Nullable(SyncEffectiveSettings, { description: 'null until the registry answered its open.' }),
  },
  'An open connection of a resumed session, as the edge holds it.',
);
export type SyncConnectionState = Static<typeof SyncConnectionState>;

export const SyncJoinedChannel = record(
  'SyncJoinedChannel',
  { channelId, claim: ChannelClaim },
  'A channel the client is in, with its claim.',
);

export const SyncRegisterResult = record(
  'SyncRegisterResult',
  {
    protocolVersion: Type.Integer({ description: 'The protocol the gateway speaks (2).' }),
    applicationId: Type.String(),
    userId: Type.String({ description: "The token's, or a UUID the gateway made." }),
    deviceId: Type.String({ description: "The token's, or a UUID the gateway made." }),
    clientId: Type.String({ description: "The token's, or a UUID the gateway made." }),
    gatewayId: Type.String({ description: 'The gateway replica holding the session.' }),
    resumed: Type.Boolean({ description: 'The socket took over a session of the same client held by this replica.' }),
    channels: Type.Array(SyncJoinedChannel, { description: 'Channels joined (resume only; else empty).' }),
    connections: Type.Array(SyncConnectionState, { description: 'Connections open (resume only; else empty).' }),
    droppedPushes: Count({ description: 'Pushes lost while no socket was attached (resume only; else 0).' }),
    iceServers: Type.Array(SyncIceServer, { description: 'STUN and TURN servers; empty: host candidates only.' }),
  },
  'The client is registered (or its session resumed).',
);
export type SyncRegisterResult = Static<typeof SyncRegisterResult>;

export const SyncJoinResult = record(
  'SyncJoinResult',
  {
    channelId,
    channel: ChannelSnapshot,
    settings: SyncEffectiveSettings,
    claim: ChannelClaim,
    upstreams: Type.Array(SyncRemoteUpstream, {
      description: 'Upstreams other clients publish now; later ones come as `upstream.opened` pushes.',
    }),
  },
  'The client is in the channel.',
);
export const SyncChannelResult = record('SyncChannelResult', { channelId }, 'Done, for this channel.');
export const SyncConnectionOpenResult = record(
  'SyncConnectionOpenResult',
  {
    connectionId: Type.String({ description: 'The one sent, or a UUID the gateway made.' }),
    channelId,
    state: Type.Literal('new'),
    mediaServerId: Nullable(Type.String(), { description: 'The media server it is placed on; null for `peer`.' }),
    settings: SyncEffectiveSettings,
  },
  'The connection is open (state `new`).',
);
export const SyncConnectionStateResult = record(
  'SyncConnectionStateResult',
  { connectionId, state: ConnectionState },
  'The connection is in its new state.',
);
export const SyncConnectionUpdateResult = record(
  'SyncConnectionUpdateResult',
  { connectionId, localAudioMuted: Type.Boolean(), localVideoMuted: Type.Boolean() },
  'The local mute flags after the update.',
);
export const SyncConnectionResult = record('SyncConnectionResult', { connectionId }, 'Done, for this connection.');
export const SyncConnectionOfferResult = record(
  'SyncConnectionOfferResult',
  { connectionId, answer: SyncAnswerDescription },
  "The media server's answer to the client's offer.",
);
export const SyncConnectionSubscribeResult = record(
  'SyncConnectionSubscribeResult',
  { connectionId, offer: SyncOfferDescription },
  "The media server's offer: answer it with `connection.answer`.",
);
export const SyncMessageResult = record(
  'SyncMessageResult',
  { delivered: Count({ description: 'Clients the message was pushed to; the sender never counts.' }) },
  'The message was handed to its recipients.',
);
export const SyncPingResult = record('SyncPingResult', { time: DateTime({ description: 'Gateway clock.' }) }, 'Pong.');
export const SyncEmptyResult = record('SyncEmptyResult', {}, 'Done; nothing to say.');

/** The `data` schema of the result of each request type. */
export const SYNC_RESULT_DATA = {
  register: SyncRegisterResult,
  join: SyncJoinResult,
  leave: SyncChannelResult,
  'connection.open': SyncConnectionOpenResult,
  'connection.state': SyncConnectionStateResult,
  'connection.update': SyncConnectionUpdateResult,
  'connection.close': SyncConnectionResult,
  'connection.offer': SyncConnectionOfferResult,
  'connection.subscribe': SyncConnectionSubscribeResult,
  'connection.answer': SyncConnectionResult,
  'connection.candidates': SyncConnectionResult,
  'connection.relay': SyncConnectionResult,
  stats: SyncEmptyResult,
  message: SyncMessageResult,
  'client.update': SyncEmptyResult,
  unregister: SyncEmptyResult,
  ping: SyncPingResult,
} as const satisfies Record<SyncRequestType, TObject>;

/** The result data of each request type. */
export type SyncResults = { [K in SyncRequestType]: Static<(typeof SYNC_RESULT_DATA)[K]> };
