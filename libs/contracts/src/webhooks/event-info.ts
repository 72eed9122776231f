/**
 * The webhook delivery body (http-contract.md, "Webhooks"): one `EventInfo`, or a `WebhookBatch`
 * `{ "batch": [EventInfo, ...] }`. What each part holds is in docs/webhooks-contract.md.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ConnectionInfo, MediaStreamInfo } from '../interface-a/runtime.js';
import { Int64, Nullable, StringList, Uuid, record } from '../interface-a/record-schema.js';
import { WebhookEventName } from './event-names.js';

const NullableString = (description?: string) => Nullable(Type.String(), description ? { description } : {});
const NullableNumber = (description: string) => Nullable(Type.Number({ minimum: 0 }), { description });

export const MediaStats = record(
  'MediaStats',
  {
    timestamp: Int64({ description: 'When the sample was taken, Unix ms.' }),
    bytesSent: NullableNumber('Bytes sent since the start.'),
    bytesReceived: NullableNumber('Bytes received since the start.'),
    packetsSent: NullableNumber('Packets sent since the start.'),
    packetsReceived: NullableNumber('Packets received since the start.'),
    packetsLost: NullableNumber('Packets lost since the start.'),
    jitter: NullableNumber('Jitter in milliseconds.'),
    roundTripTime: NullableNumber('Round-trip time in milliseconds.'),
    sendBitrate: NullableNumber('Current send bitrate in bits per second.'),
    receiveBitrate: NullableNumber('Current receive bitrate in bits per second.'),
    frameWidth: NullableNumber('Width of the video frames in pixels.'),
    frameHeight: NullableNumber('Height of the video frames in pixels.'),
    frameRate: NullableNumber('Video frames per second.'),
  },
  'A statistics sample of a connection, or of a client (summed over its connections; frame fields null).',
);
export type MediaStats = Static<typeof MediaStats>;

export const WebhookEventRecording = record(
  'WebhookEventRecording',
  {
    id: Uuid({ description: 'Channel recording id or connection recording id.' }),
    startTimestamp: Int64({ description: 'Unix ms.' }),
    stopTimestamp: Nullable(Int64(), { description: 'Unix ms; null while recording.' }),
    expiryTimestamp: Nullable(Int64(), { description: 'Unix ms; null: never expires.' }),
    hasAudio: Type.Boolean(),
    hasVideo: Type.Boolean(),
    ready: Type.Boolean({ description: 'The (muxed) file is ready.' }),
    audioReady: Type.Boolean(),
    videoReady: Type.Boolean(),
    fileName: NullableString(),
    audioFileName: NullableString(),
    videoFileName: NullableString(),
    url: NullableString(),
    audioUrl: NullableString(),
    videoUrl: NullableString(),
    error: NullableString('Why muxing or moving failed (`*.mux.failed`, `*.move.failed`).'),
  },
  'A channel or connection recording, as carried by recording events.',
);
export type WebhookEventRecording = Static<typeof WebhookEventRecording>;

export const WebhookEventChannel = record(
  'WebhookEventChannel',
  {
    id: Type.String({ description: 'Channel id.' }),
    applicationId: Type.String(),
    channelRecording: Nullable(WebhookEventRecording, { description: 'Set for `channel.recording.*` events.' }),
  },
  'The channel part of an event.',
);
export type WebhookEventChannel = Static<typeof WebhookEventChannel>;

export const WebhookEventClient = record(
  'WebhookEventClient',
  {
    id: Type.String({ description: 'Client id.' }),
    userId: Type.String(),
    userAlias: NullableString(),
    deviceId: Type.String(),
    deviceAlias: NullableString(),
    tag: NullableString(),
    roles: StringList(),
    applicationId: Type.String(),
    stats: Nullable(MediaStats, { description: 'Set for `client.stats` events.' }),
  },
  'The client part of an event.',
);
export type WebhookEventClient = Static<typeof WebhookEventClient>;

/** The connection info fields an event carries. */
export const WEBHOOK_CONNECTION_FIELDS = [
  'id',
  'applicationId',
  'channelId',
  'userId',
  'userAlias',
  'deviceId',
  'deviceAlias',
  'clientId',
  'clientTag',
  'clientRoles',
  'externalId',
  'tag',
  'type',
  'state',
  'isSip',
  'error',
  'remoteConnectionId',
  'recording',
  'recordingTag',
  'hasAudio',
  'hasVideo',
  'hasData',
  'audioDirection',
  'videoDirection',
  'dataDirection',
  'localAudioMuted',
  'localVideoMuted',
  'localAudioDisabled',
  'localVideoDisabled',
  'remoteAudioDisabled',
  'remoteVideoDisabled',
] as const;

export const WebhookEventConnection = record(
  'WebhookEventConnection',
  {
    ...Type.Pick(ConnectionInfo, WEBHOOK_CONNECTION_FIELDS).properties,
    videoStream: Type.Optional(
      Nullable(MediaStreamInfo, {
        description:
          'The video stream with its frame size (`width`, `height`, `frameRate`) when known; null without video.',
      }),
    ),
    stats: Nullable(MediaStats, { description: 'Set for `connection.stats` events.' }),
    connectionRecording: Nullable(WebhookEventRecording, { description: 'Set for `connection.recording*` events.' }),
  },
  'The connection part of an event: a subset of the interface A connection info.',
);
export type WebhookEventConnection = Static<typeof WebhookEventConnection>;

export const WebhookEventMessage = record(
  'WebhookEventMessage',
  {
    message: NullableString('The message text.'),
    clientTag: NullableString('Client tag of the sender.'),
    clientRoles: Nullable(StringList(), { description: 'Client roles of the sender.' }),
    deviceId: NullableString('Device id of the sender.'),
    deviceAlias: NullableString('Device alias of the sender.'),
    userId: NullableString('User id of the sender.'),
    userAlias: NullableString('User alias of the sender.'),
  },
  'The message part of a message event (the fields of the message body, all present).',
);
export type WebhookEventMessage = Static<typeof WebhookEventMessage>;

export const EventInfo = record(
  'EventInfo',
  {
    id: Type.String({
      minLength: 1,
      description: 'Unique event id; the same on every delivery attempt (use it to deduplicate).',
    }),
    timestamp: Int64({ description: 'When the event happened, Unix ms.' }),
    origin: Type.String({
      description:
        'What caused the event: `client` (the client itself), `server` (the service) or `api` (an interface A or B call).',
    }),
    type: WebhookEventName,
    forced: Type.Boolean({
      description:
        'true when the service or an operator forced the change (e.g. a kick), false when the client asked for it.',
    }),
    channel: Nullable(WebhookEventChannel),
    client: Nullable(WebhookEventClient),
    connection: Nullable(WebhookEventConnection),
    message: Nullable(WebhookEventMessage),
  },
  'One webhook event.',
);
export type EventInfo = Static<typeof EventInfo>;

export const WebhookBatch = record(
  'WebhookBatch',
  {
    batch: Type.Array(EventInfo, { minItems: 1, description: 'Events generated at the same moment for the webhook.' }),
  },
  'Body of a delivery to a webhook with `batch: true`.',
);
export type WebhookBatch = Static<typeof WebhookBatch>;
