/**
 * Schemas of the pushes a `/sync` client receives (`{ "type": "push", "push": ... }`), one per member
 * of `ServerPush` (messaging/runtime-push.ts). sync-schemas.spec.ts checks at type level that they say
 * exactly what `ServerPush` says, so the AsyncAPI document (sync-asyncapi.ts) cannot drift from it.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import { ConnectionState, MessageBody } from '../interface-a/runtime.js';
import { Nullable, OptionalNullable, StringEnum, StringList, record } from '../interface-a/record-schema.js';
import { ChannelClaim } from '../interface-b/channel-claim.js';
import { MediaIceCandidate, MediaSessionDescription } from '../messaging/media.js';
import type { ServerPush } from '../messaging/runtime-push.js';

const Text = (description: string) => Type.String({ description });
const channelId = Text('The channel.');
const connectionId = Text('The connection (of this client, unless said otherwise).');

export const SyncEffectiveSettings = record(
  'SyncEffectiveSettings',
  {
    recording: Type.Boolean({ description: 'The connection is recorded.' }),
    recordingTag: Nullable(Type.String(), { description: 'Tag of the recording.' }),
    audioMuted: Type.Boolean({ description: 'An operator muted the audio: the media server drops it.' }),
    videoMuted: Type.Boolean({ description: 'An operator muted the video: the media server drops it.' }),
    audioUnmuteDisabled: Type.Boolean({ description: 'Unmuting audio is refused (`UnmuteDisabled`).' }),
    videoUnmuteDisabled: Type.Boolean({ description: 'Unmuting video is refused (`UnmuteDisabled`).' }),
  },
  'What applies to one connection once the channel, user, device, client and connection levels are combined.',
);

export const SyncRemoteUpstream = record(
  'SyncRemoteUpstream',
  {
    connectionId: Text('Name it as `remoteConnectionId` of a downstream `sfu` connection.open to receive it.'),
    userId: Type.String(),
    userAlias: Nullable(Type.String()),
    deviceId: Type.String(),
    deviceAlias: Nullable(Type.String()),
    clientId: Type.String(),
    clientTag: Nullable(Type.String()),
    audio: Type.Boolean({ description: 'It sends audio.' }),
    video: Type.Boolean({ description: 'It sends video.' }),
    data: Type.Boolean({ description: 'It sends data.' }),
  },
  'An upstream `sfu` connection another client of the channel publishes.',
);

export const SyncMessageSender = record(
  'SyncMessageSender',
  {
    userId: Nullable(Type.String()),
    userAlias: Nullable(Type.String()),
    deviceId: Nullable(Type.String()),
    deviceAlias: Nullable(Type.String()),
    clientId: Nullable(Type.String(), { description: 'null for a message an operator sent (interface A, B).' }),
    clientTag: Nullable(Type.String()),
    clientRoles: Nullable(StringList()),
  },
  'Who sent a message: the registered identity of the sending client, or what an operator wrote in its body.',
);

export const SYNC_CONNECTION_END_REASONS = ['failed', 'remote-left', 'remote-kicked', 'media-server-lost'] as const;

export const SyncMessagePush = record(
  'SyncMessagePush',
  {
    type: Type.Literal('message'),
    channelId: Nullable(Type.String(), { description: 'The channel it was sent in; null: sent to the application.' }),
    message: MessageBody,
    from: SyncMessageSender,
  },
  'A message from another client (never the sender itself) or from an operator. `message` is an object: the text ' +
    'a client sent (its `message` string) is in `message.message`, with the sender identity beside it.',
);
export const SyncKickedPush = record(
  'SyncKickedPush',
  {
    type: Type.Literal('kicked'),
    channelId,
    connectionId: OptionalNullable(Type.String(), { description: 'Absent or null: the client left the channel.' }),
  },
  'Kicked out of a channel (its connections are gone), or one connection kicked.',
);
export const SyncSettingsPush = record(
  'SyncSettingsPush',
  {
    type: Type.Literal('settings'),
    channelId,
    connectionId,
    settings: SyncEffectiveSettings,
    version: Type.Optional(
      Type.Number({ description: 'Order of settings changes in the application; a lower one than seen is stale.' }),
    ),
  },
  'The effective settings of a connection changed (operator mute, unmute disabled, recording).',
);
export const SyncClientUpdatedPush = record(
  'SyncClientUpdatedPush',
  {
    type: Type.Literal('client.updated'),
    userAlias: Nullable(Type.String()),
    deviceAlias: Nullable(Type.String()),
    tag: Nullable(Type.String()),
    roles: StringList(),
  },
  'An operator changed the aliases, tag or roles of the client.',
);
export const SyncClaimUpdatedPush = record(
  'SyncClaimUpdatedPush',
  { type: Type.Literal('claim.updated'), channelId, claim: ChannelClaim },
  'An operator replaced the claim of the client for a channel it is in.',
);
export const SyncUnregisteredPush = record(
  'SyncUnregisteredPush',
  { type: Type.Literal('unregistered'), reason: Text('Why, in words.') },
  'The client is no longer registered (removed by an operator, or registered again elsewhere). Last frame: close 4010.',
);
export const SyncConnectionStatePush = record(
  'SyncConnectionStatePush',
  { type: Type.Literal('connection.state'), channelId, connectionId, state: ConnectionState },
  'The media server moved a connection (`connected` once its PeerConnection is up).',
);
export const SyncConnectionOfferPush = record(
  'SyncConnectionOfferPush',
  { type: Type.Literal('connection.offer'), channelId, connectionId, offer: MediaSessionDescription },
  'The media server renegotiates a downstream connection: answer it with `connection.answer`.',
);
export const SyncConnectionEndedPush = record(
  'SyncConnectionEndedPush',
  {
    type: Type.Literal('connection.ended'),
    channelId,
    connectionId,
    reason: StringEnum(SYNC_CONNECTION_END_REASONS),
  },
  'A connection is gone because of its media (ICE/DTLS failed, its upstream or other peer left or was kicked, its media server lost).',
);
export const SyncUpstreamOpenedPush = record(
  'SyncUpstreamOpenedPush',
  { type: Type.Literal('upstream.opened'), channelId, upstream: SyncRemoteUpstream },
  'Another client of the channel publishes an upstream `sfu` connection: subscribe to receive it.',
);
export const SyncUpstreamClosedPush = record(
  'SyncUpstreamClosedPush',
  { type: Type.Literal('upstream.closed'), channelId, connectionId: Text('The remote upstream connection.') },
  'A remote upstream of the channel stopped (closed, failed, kicked).',
);
export const SyncConnectionRelayedPush = record(
  'SyncConnectionRelayedPush',
  {
    type: Type.Literal('connection.relayed'),
    channelId,
    connectionId: Text("The receiving client's own peer connection."),
    remoteConnectionId: Text('The peer connection of the other client that sent it.'),
    offer: Type.Optional(MediaSessionDescription),
    answer: Type.Optional(MediaSessionDescription),
    candidates: Type.Optional(Type.Array(MediaIceCandidate)),
    completed: Type.Optional(Type.Boolean()),
  },
  'Signalling of the other side of a `peer` connection (its `connection.relay`): exactly one of `offer`, `answer`, `candidates`.',
);

/** The schema of each push type; the keys are exactly `ServerPush['type']` (checked by `satisfies`). */
export const SYNC_PUSHES = {
  message: SyncMessagePush,
  kicked: SyncKickedPush,
  settings: SyncSettingsPush,
  'client.updated': SyncClientUpdatedPush,
  'claim.updated': SyncClaimUpdatedPush,
  unregistered: SyncUnregisteredPush,
  'connection.state': SyncConnectionStatePush,
  'connection.offer': SyncConnectionOfferPush,
  'connection.ended': SyncConnectionEndedPush,
  'upstream.opened': SyncUpstreamOpenedPush,
  'upstream.closed': SyncUpstreamClosedPush,
  'connection.relayed': SyncConnectionRelayedPush,
} as const satisfies { [K in ServerPush['type']]: TObject };

export type SyncPushType = keyof typeof SYNC_PUSHES;
export const SYNC_PUSH_TYPES = Object.keys(SYNC_PUSHES) as SyncPushType[];

export const SyncServerPush = Type.Union(Object.values(SYNC_PUSHES) as Array<(typeof SYNC_PUSHES)[SyncPushType]>, {
  description: 'A push: its `type` says which.',
});
/** Equal to `ServerPush` (sync-schemas.spec.ts checks it). */
export type SyncServerPush = Static<typeof SyncServerPush>;
