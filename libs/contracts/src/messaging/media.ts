/**
 * The media-agent contract (issue 22; apps/media-agent/README.md describes it in full).
 * - `media-agent.v1.<mediaServerId>.command` (request/reply): `MediaAgentCommand` (`{ kind, ...params }`,
 *   checked by `parseMediaAgentCommand`), result per kind in `MediaAgentResults`; errors are DomainError
 *   codes (`ValidationFailed`, `NotFound`, `Conflict`, `Unavailable`, `Internal` with Janus's message).
 * - `media-agent.v1.<mediaServerId>.events` (publish, at most once): `MediaAgentEventEnvelope`;
 *   `media-agent.v1.*.events` subscribes to every server's.
 * Rooms are named by `{ applicationId, channelId }`, connections by `connectionId` in their channel:
 * Janus room numbers, feeds and handles stay in the agent. A publisher sends one upstream; a subscriber
 * receives one remote publisher (`remoteConnectionId`), the LiveSwitch SFU model.
 */
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { ContractViolation, validator } from '../validation/validate.js';
import { MEDIA_STATS_EVENTS } from './media-stats.js';

export * from './media-stats.js';

export type MediaAgentCommandSubject = `media-agent.v1.${string}.command`;

export const MediaAgentSubjects = {
  command: (mediaServerId: string): MediaAgentCommandSubject => `media-agent.v1.${mediaServerId}.command`,
  events: (mediaServerId: string) => `media-agent.v1.${mediaServerId}.events`,
  /** Every media server's events (a subscription pattern). */
  allEvents: 'media-agent.v1.*.events',
} as const;

const Id = () => Type.String({ minLength: 1, maxLength: 256 });
const channel = { applicationId: Id(), channelId: Id() };
const connection = { ...channel, connectionId: Id() };

/** An SDP offer or answer, as RTCSessionDescriptionInit. */
export const MediaSessionDescription = Type.Object(
  {
    type: Type.Union([Type.Literal('offer'), Type.Literal('answer')]),
    sdp: Type.String({ minLength: 1, maxLength: 200_000 }),
  },
  { $id: 'MediaSessionDescription', additionalProperties: false },
);
export type MediaSessionDescription = Static<typeof MediaSessionDescription>;

/** One ICE candidate, as RTCIceCandidateInit. */
export const MediaIceCandidate = Type.Object(
  {
    candidate: Type.String({ maxLength: 2048 }),
    sdpMid: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    sdpMLineIndex: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1024 }), Type.Null()])),
    usernameFragment: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  },
  { $id: 'MediaIceCandidate', additionalProperties: false },
);
export type MediaIceCandidate = Static<typeof MediaIceCandidate>;

function kindSchema<K extends string, P extends TProperties>(kind: K, props: P) {
  return Type.Object(
    { kind: Type.Literal(kind), ...props },
    { additionalProperties: false, $id: `MediaAgent:${kind}` },
  );
}

/**
 * `mcu` connections: the channel's AudioBridge room (Janus mixes their audio; each participant
 * receives the mix of the others). Janus mixes no video: `mixer.create` with `video: true` is refused.
 */
const MIXER_COMMANDS = {
  /** Creates the channel's AudioBridge room; `created: false` when it exists already. */
  'mixer.create': kindSchema('mixer.create', { ...channel, video: Type.Optional(Type.Boolean()) }),
  /** Hangs up every participant and destroys the mixer; `connectionIds`: those ended. */
  'mixer.destroy': kindSchema('mixer.destroy', channel),
  /** A participant joins with the client's offer (audio); the result holds Janus's answer. */
  'mixer.join': kindSchema('mixer.join', {
    ...connection,
    display: Type.Optional(Type.String({ maxLength: 256 })),
    offer: MediaSessionDescription,
  }),
  /** The participant leaves: its handle hung up and detached. */
  'mixer.leave': kindSchema('mixer.leave', connection),
  /** Mutes (unmutes) the participants at the mixer (AudioBridge `mute`): their audio leaves the mix. */
  'mixer.mute': kindSchema('mixer.mute', {
    ...channel,
    connectionIds: Type.Array(Id(), { minItems: 1, maxItems: 1000 }),
    muted: Type.Boolean(),
  }),
  /** Ends the participants (AudioBridge `kick`, then their handles detached). */
  'mixer.kick': kindSchema('mixer.kick', {
    ...channel,
    connectionIds: Type.Array(Id(), { minItems: 1, maxItems: 1000 }),
  }),
} as const;

export const MEDIA_AGENT_COMMANDS = {
  /** Creates the channel's VideoRoom room; `created: false` when it exists already (idempotent). */
  'room.create': kindSchema('room.create', {
    ...channel,
    /** Bitrate cap of each publisher, bits/s (Janus `bitrate`); 0 or absent: no cap. */
    bitrate: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
    maxPublishers: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  }),
  /** Every room of this server and its connections (reconciliation after a registry restart). */
  'rooms.list': kindSchema('rooms.list', {}),
  /** Hangs up every connection of the room and destroys it; `connectionIds` are those ended. */
  'room.destroy': kindSchema('room.destroy', channel),
  /** A publisher joins with the client's offer; the result holds Janus's answer. */
  'publisher.join': kindSchema('publisher.join', {
    ...connection,
    display: Type.Optional(Type.String({ maxLength: 256 })),
    offer: MediaSessionDescription,
  }),
  /** A subscriber to one publisher of the room; the result holds Janus's offer. */
  'subscriber.join': kindSchema('subscriber.join', { ...connection, remoteConnectionId: Id() }),
  /** The subscriber's answer to the offer of `subscriber.join`. */
  'subscriber.answer': kindSchema('subscriber.answer', { ...connection, answer: MediaSessionDescription }),
  /** The client's ICE candidates; `completed` once it has no more. */
  'connection.trickle': kindSchema('connection.trickle', {
    ...connection,
    candidates: Type.Array(MediaIceCandidate, { maxItems: 64 }),
    completed: Type.Optional(Type.Boolean()),
  }),
  /** The connection closes (the client left): Janus's handle hung up and detached. */
  'connection.leave': kindSchema('connection.leave', connection),
  /**
   * Mutes or unmutes at the server (VideoRoom `moderate`) the audio and/or video the publishers
   * among `connectionIds` send; the client cannot undo it. `moderated`: the publishers found.
   */
  'connections.moderate': kindSchema('connections.moderate', {
    ...channel,
    connectionIds: Type.Array(Id(), { minItems: 1, maxItems: 1000 }),
    audioMuted: Type.Optional(Type.Boolean()),
    videoMuted: Type.Optional(Type.Boolean()),
  }),
  /**
   * Ends the connections (publishers: VideoRoom `kick`; then every handle detached). The
   * subscribers of a kicked publisher are told by `subscription.ended` (Janus 1.1.2 tells them nothing).
   */
  'connections.kick': kindSchema('connections.kick', {
    ...channel,
    connectionIds: Type.Array(Id(), { minItems: 1, maxItems: 1000 }),
  }),
  /**
   * Starts (`recording: true`) or stops (`false`) the recording of a publisher's streams (issue 24).
   * On start the agent asks recording-service `media.recordingTarget`; on stop (also on leave, kick,
   * room destroy, agent shutdown) it converts the files and uploads them for the ingest. A start
   * after a stop records a new connection recording. Idempotent; `NotFound` for no such publisher.
   */
  'connection.record': kindSchema('connection.record', { ...connection, recording: Type.Boolean() }),
  ...MIXER_COMMANDS,
} as const;

export type MediaAgentCommandKind = keyof typeof MEDIA_AGENT_COMMANDS;
export type MediaAgentCommand = {
  [K in MediaAgentCommandKind]: Static<(typeof MEDIA_AGENT_COMMANDS)[K]>;
}[MediaAgentCommandKind];
export type MediaAgentCommandOf<K extends MediaAgentCommandKind> = Extract<MediaAgentCommand, { kind: K }>;

/** One room in the answer of `rooms.list`. */
export interface MediaRoomListing {
  applicationId: string;
  channelId: string;
  connections: Array<
    | { connectionId: string; role: 'publisher' }
    | { connectionId: string; role: 'subscriber'; remoteConnectionId: string }
  >;
}

export interface MediaAgentResults {
  'room.create': { created: boolean };
  'rooms.list': { rooms: MediaRoomListing[] };
  'room.destroy': { destroyed: boolean; connectionIds: string[] };
  'publisher.join': { answer: MediaSessionDescription };
  'subscriber.join': { offer: MediaSessionDescription };
  'subscriber.answer': null;
  'connection.trickle': null;
  'connection.leave': { left: boolean };
  'connections.moderate': { moderated: string[] };
  'connections.kick': { kicked: string[] };
  'mixer.create': { created: boolean };
  'mixer.destroy': { destroyed: boolean; connectionIds: string[] };
  'mixer.join': { answer: MediaSessionDescription };
  'mixer.leave': { left: boolean };
  'mixer.mute': { muted: string[] };
  'mixer.kick': { kicked: string[] };
  /** Whether the publisher is being recorded now. */
  'connection.record': { recording: boolean };
}
export type MediaAgentResult<K extends MediaAgentCommandKind> = MediaAgentResults[K];

// NatsClient.request takes the command subjects (the result is the union: narrow it by the kind sent).
declare module './subjects.js' {
  interface RequestMap {
    [subject: MediaAgentCommandSubject]: {
      request: MediaAgentCommand;
      response: MediaAgentResults[MediaAgentCommandKind];
    };
  }
}

const kindOnly = validator(
  Type.Object({ kind: Type.String({ maxLength: 64 }) }, { $id: 'MediaAgentCommand' }),
  'MediaAgentCommand',
);

/** Validates a command: its kind, then the kind's parameters (unknown fields rejected). */
export function parseMediaAgentCommand(value: unknown): MediaAgentCommand {
  const { kind } = kindOnly.parse(value);
  const schema = (MEDIA_AGENT_COMMANDS as Record<string, TObject>)[kind];
  if (!schema) throw new ContractViolation('MediaAgentCommand', [{ field: 'kind', message: `unknown kind "${kind}"` }]);
  return validator(schema, `MediaAgentCommand ${kind}`).parse(value) as MediaAgentCommand;
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

const MediaKind = Type.Union([Type.Literal('audio'), Type.Literal('video')]);

export const MEDIA_AGENT_EVENTS = {
  /** Janus: the PeerConnection of the connection is up (ICE and DTLS done). */
  'connection.webrtcup': kindSchema('connection.webrtcup', connection),
  /** Janus: media of one kind started or stopped arriving (`receiving`) at Janus or at the client. */
  'connection.media': kindSchema('connection.media', {
    ...connection,
    mediaType: MediaKind,
    mid: Type.Optional(Type.String({ maxLength: 64 })),
    receiving: Type.Boolean(),
  }),
  /** Janus: many NACKs (`uplink`: Janus receiving from the client) on the connection. */
  'connection.slowlink': kindSchema('connection.slowlink', {
    ...connection,
    uplink: Type.Boolean(),
    mediaType: Type.Optional(MediaKind),
    lost: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  /** Janus renegotiates a subscriber (its publisher's streams changed): the client answers with `subscriber.answer`. */
  'connection.offer': kindSchema('connection.offer', { ...connection, offer: MediaSessionDescription }),
  /** Janus: the PeerConnection is down (`reason` as Janus says, e.g. "DTLS alert", "ICE failed"). */
  'connection.hangup': kindSchema('connection.hangup', { ...connection, reason: Type.String({ maxLength: 512 }) }),
  /**
   * The connection is gone from Janus: `left` (connection.leave), `kicked`, `room-destroyed`, or
   * `media-server-lost` (the agent lost its Janus, which ends every handle of the agent's session).
   */
  'connection.ended': kindSchema('connection.ended', {
    ...connection,
    reason: Type.Union([
      Type.Literal('left'),
      Type.Literal('kicked'),
      Type.Literal('room-destroyed'),
      Type.Literal('media-server-lost'),
    ]),
  }),
  /**
   * The channel's room is gone from this server: `destroyed` (room.destroy), `media-server-lost`
   * (Janus lost: its connections ended too), `cleaned-up` (a room an earlier agent session left in
   * Janus, destroyed when the agent (re)connected; its connections are not known to the agent).
   */
  'room.ended': kindSchema('room.ended', {
    ...channel,
    reason: Type.Union([Type.Literal('destroyed'), Type.Literal('media-server-lost'), Type.Literal('cleaned-up')]),
  }),
  /**
   * The publisher a subscriber received is gone (`kicked` or `left`): its media stopped. The
   * subscriber's own connection stays until it leaves.
   */
  'subscription.ended': kindSchema('subscription.ended', {
    ...connection,
    remoteConnectionId: Id(),
    reason: Type.Union([Type.Literal('left'), Type.Literal('kicked')]),
  }),
  ...MEDIA_STATS_EVENTS,
} as const;

export type MediaAgentEventKind = keyof typeof MEDIA_AGENT_EVENTS;
export type MediaAgentEvent = {
  [K in MediaAgentEventKind]: Static<(typeof MEDIA_AGENT_EVENTS)[K]>;
}[MediaAgentEventKind];

export const MediaAgentEventEnvelope = Type.Object(
  {
    mediaServerId: Id(),
    /** ISO 8601, when the agent saw it. */
    time: Type.String({ maxLength: 64 }),
    event: Type.Union(Object.values(MEDIA_AGENT_EVENTS)),
  },
  { $id: 'MediaAgentEventEnvelope', additionalProperties: false },
);
export type MediaAgentEventEnvelope = { mediaServerId: string; time: string; event: MediaAgentEvent };
export const mediaAgentEventEnvelope = validator(MediaAgentEventEnvelope);
