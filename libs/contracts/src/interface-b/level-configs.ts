/**
 * Level config objects, the claims payload and the server message of interface B
 * (service-spec.md 2.B), used by the action payloads (actions.ts).
 *
 * Level configs are the interface B twins of the interface A patch bodies: every field optional
 * and nullable (absent or null: unchanged; the spec gives the field names but not their
 * nullability). `recordingMode` is a free string (`AudioVideo` is the documented example; its other
 * values are not in the spec). The channel client config spells its audio unmute flag
 * `audioUmuteDisabled` (sic, wire compatibility) and only that object does.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MessageBody } from '../interface-a/runtime.js';
import {
  OptionalNullable,
  SHORT_TEXT_LIST_MAX_ITEMS,
  ShortText,
  ShortTextList,
  patchFields,
  record,
} from '../interface-a/record-schema.js';
import { ChannelClaim } from './channel-claim.js';
import {
  audioUnmuteDisabled,
  excludedBelow,
  muteFlags,
  recording,
  recordingTag,
  videoUnmuteDisabled,
} from '../interface-a/level-fields.js';

const common = {
  recording,
  recordingMode: ShortText({
    default: 'AudioVideo',
    examples: ['AudioVideo'],
    description: 'What is recorded, e.g. `AudioVideo`.',
  }),
  recordingTag,
  ...muteFlags,
};

export const ChannelConfigUpdate = record(
  'ChannelConfigUpdate',
  patchFields({
    ...common,
    audioUnmuteDisabled,
    videoUnmuteDisabled,
    ...excludedBelow.channel,
  }),
  'Channel-level settings of an UpdateChannel action.',
);
export type ChannelConfigUpdate = Static<typeof ChannelConfigUpdate>;

export const ChannelUserConfig = record(
  'ChannelUserConfig',
  patchFields({
    ...common,
    audioUnmuteDisabled,
    videoUnmuteDisabled,
    ...excludedBelow.user,
  }),
  'Settings of a user in a channel (UpdateUser action).',
);
export type ChannelUserConfig = Static<typeof ChannelUserConfig>;

export const ChannelDeviceConfig = record(
  'ChannelDeviceConfig',
  patchFields({
    ...common,
    audioUnmuteDisabled,
    videoUnmuteDisabled,
    ...excludedBelow.device,
  }),
  'Settings of a device in a channel (UpdateDevice action).',
);
export type ChannelDeviceConfig = Static<typeof ChannelDeviceConfig>;

export const ChannelClientConfig = record(
  'ChannelClientConfig',
  patchFields({
    ...common,
    audioUmuteDisabled: Type.Boolean({
      description:
        'Disable (true) or enable (false) unmuting audio. Spelled `audioUmuteDisabled` in this object only (wire compatibility).',
    }),
    videoUnmuteDisabled,
    ...excludedBelow.client,
  }),
  'Settings of a client in a channel (UpdateClient action).',
);
export type ChannelClientConfig = Static<typeof ChannelClientConfig>;

export const ConnectionConfig = record(
  'ConnectionConfig',
  patchFields({ ...common, audioUnmuteDisabled, videoUnmuteDisabled }),
  'Settings of a connection (UpdateConnection action).',
);
export type ConnectionConfig = Static<typeof ConnectionConfig>;

export const ClaimsPayload = record(
  'ClaimsPayload',
  {
    userId: OptionalNullable(ShortText()),
    deviceId: OptionalNullable(ShortText()),
    clientId: OptionalNullable(ShortText()),
    clientRoles: OptionalNullable(ShortTextList()),
    channelClaims: OptionalNullable(Type.Array(ChannelClaim, { maxItems: SHORT_TEXT_LIST_MAX_ITEMS })),
  },
  'Claims of a client: the payload of the Token action.',
);
export type ClaimsPayload = Static<typeof ClaimsPayload>;

export const ServerMessage = record(
  'ServerMessage',
  { ...MessageBody.properties },
  'A server message: the same fields as the interface A message body.',
);
export type ServerMessage = Static<typeof ServerMessage>;
