/**
 * The media signalling requests of `/sync` (protocol version 2): SDP offer/answer and trickle ICE of
 * a connection placed on a media server, and the ICE servers a client gets at register
 * (docs/sync-protocol.md, "Media signalling").
 */
import { Type, type Static } from '@sinclair/typebox';
import { record } from '../interface-a/record-schema.js';
import { MediaIceCandidate } from '../messaging/media.js';

const ConnectionId = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
  description: 'An open connection of the client.',
});
const Sdp = Type.String({ minLength: 1, maxLength: 200_000, description: 'The SDP text.' });

export const SyncOfferDescription = record(
  'SyncOfferDescription',
  { type: Type.Literal('offer'), sdp: Sdp },
  'An SDP offer, as RTCSessionDescriptionInit.',
);
export const SyncAnswerDescription = record(
  'SyncAnswerDescription',
  { type: Type.Literal('answer'), sdp: Sdp },
  'An SDP answer, as RTCSessionDescriptionInit.',
);

export const SyncConnectionOfferData = record(
  'SyncConnectionOfferData',
  { connectionId: ConnectionId, offer: SyncOfferDescription },
  "The client's offer for a connection that sends (an upstream `sfu` connection, or `mcu`): answered with the media server's answer.",
);
export type SyncConnectionOfferData = Static<typeof SyncConnectionOfferData>;

export const SyncConnectionSubscribeData = record(
  'SyncConnectionSubscribeData',
  { connectionId: ConnectionId },
  'Asks the media server for its offer of a downstream `sfu` connection (the remote upstream it receives).',
);
export type SyncConnectionSubscribeData = Static<typeof SyncConnectionSubscribeData>;

export const SyncConnectionAnswerData = record(
  'SyncConnectionAnswerData',
  { connectionId: ConnectionId, answer: SyncAnswerDescription },
  "The client's answer to the media server's offer (of `connection.subscribe`, or of a `connection.offer` push).",
);
export type SyncConnectionAnswerData = Static<typeof SyncConnectionAnswerData>;

export const SyncConnectionCandidatesData = record(
  'SyncConnectionCandidatesData',
  {
    connectionId: ConnectionId,
    candidates: Type.Array(MediaIceCandidate, { maxItems: 64, description: 'ICE candidates, as RTCIceCandidateInit.' }),
    completed: Type.Optional(Type.Boolean({ description: 'true once the client has gathered every candidate.' })),
  },
  "The client's ICE candidates (trickle ICE).",
);
export type SyncConnectionCandidatesData = Static<typeof SyncConnectionCandidatesData>;

export const SyncConnectionRelayData = record(
  'SyncConnectionRelayData',
  {
    connectionId: ConnectionId,
    offer: Type.Optional(SyncOfferDescription),
    answer: Type.Optional(SyncAnswerDescription),
    candidates: Type.Optional(
      Type.Array(MediaIceCandidate, { maxItems: 64, description: 'ICE candidates, as RTCIceCandidateInit.' }),
    ),
    completed: Type.Optional(Type.Boolean({ description: 'With `candidates`: the last ones.' })),
  },
  'Signalling of a `peer` connection, relayed to the other side (the connection its `remoteConnectionId` names, ' +
    'which names this one back): exactly one of `offer`, `answer`, `candidates`.',
);
export type SyncConnectionRelayData = Static<typeof SyncConnectionRelayData>;
