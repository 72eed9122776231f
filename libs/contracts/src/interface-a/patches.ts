/**
 * Patch bodies of interface A (service-spec.md 2.A). Every field is optional and nullable; an
 * absent or null field leaves the current value unchanged.
 *
 * Semantics: `recording` enables or disables recording; `recordingTag` tags the recording when it
 * is being enabled; `audioMuted`/`videoMuted` mute or unmute; `audioUnmuteDisabled`/
 * `videoUnmuteDisabled` disable or enable unmuting; `excluded...Ids` name entities to exclude.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ChannelClaim } from '../interface-b/channel-claim.js';
import { DateTime, ShortText, ShortTextList, patchFields, record } from './record-schema.js';
import {
  audioUnmuteDisabled,
  excludedBelow,
  muteFlags,
  recording,
  recordingTag,
  videoUnmuteDisabled,
} from './level-fields.js';

/** The level flags shared by every runtime patch (types before `|null`). */
const levelFlags = { recording, recordingTag, ...muteFlags, audioUnmuteDisabled, videoUnmuteDisabled };

export const ChannelRecordingPatch = record(
  'ChannelRecordingPatch',
  patchFields({ expiryTimestamp: DateTime({ description: 'New expiry time of the recording.' }) }),
  'Changes the expiry of a channel recording.',
);
export type ChannelRecordingPatch = Static<typeof ChannelRecordingPatch>;

export const ChannelPatch = record(
  'ChannelPatch',
  patchFields({
    ...levelFlags,
    ...excludedBelow.channel,
  }),
  'Changes recording and mute settings of a channel.',
);
export type ChannelPatch = Static<typeof ChannelPatch>;

export const UserInChannelPatch = record(
  'UserInChannelPatch',
  patchFields({
    ...levelFlags,
    ...excludedBelow.user,
  }),
  'Changes recording and mute settings of a user in a channel.',
);
export type UserInChannelPatch = Static<typeof UserInChannelPatch>;

export const DeviceInChannelPatch = record(
  'DeviceInChannelPatch',
  patchFields({ ...levelFlags, ...excludedBelow.device }),
  'Changes recording and mute settings of a device in a channel.',
);
export type DeviceInChannelPatch = Static<typeof DeviceInChannelPatch>;

export const ClientPatch = record(
  'ClientPatch',
  patchFields({ userAlias: ShortText(), deviceAlias: ShortText(), tag: ShortText(), roles: ShortTextList() }),
  'Changes the aliases, tag and roles of a client.',
);
export type ClientPatch = Static<typeof ClientPatch>;

export const ClientInChannelPatch = record(
  'ClientInChannelPatch',
  patchFields({ claim: ChannelClaim, ...levelFlags, ...excludedBelow.client }),
  'Changes the channel claim and the recording and mute settings of a client in a channel.',
);
export type ClientInChannelPatch = Static<typeof ClientInChannelPatch>;

export const ConnectionPatch = record(
  'ConnectionPatch',
  patchFields({ ...levelFlags }),
  'Changes recording and mute settings of a connection.',
);
export type ConnectionPatch = Static<typeof ConnectionPatch>;

export const MediaServerPatch = record(
  'MediaServerPatch',
  patchFields({ active: Type.Boolean({ description: 'true enables the media server, false disables it.' }) }),
  'Enables or disables a media server.',
);
export type MediaServerPatch = Static<typeof MediaServerPatch>;
