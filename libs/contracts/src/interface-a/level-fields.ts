/**
 * Fields shared by the interface A patch bodies and their interface B twins, the level configs:
 * the recording and mute flags, and the `excluded...Ids` lists of the levels below a level.
 */
import { Type } from '@sinclair/typebox';
import { ShortText, ShortTextList } from './record-schema.js';

export const recording = Type.Boolean({ description: 'Enable (true) or disable (false) recording.' });
export const recordingTag = ShortText({ description: 'Tag of the recording when recording is being enabled.' });
export const muteFlags = {
  audioMuted: Type.Boolean({ description: 'Mute (true) or unmute (false) audio.' }),
  videoMuted: Type.Boolean({ description: 'Mute (true) or unmute (false) video.' }),
};
export const audioUnmuteDisabled = Type.Boolean({ description: 'Disable (true) or enable (false) unmuting audio.' });
export const videoUnmuteDisabled = Type.Boolean({ description: 'Disable (true) or enable (false) unmuting video.' });

const excludedIds = (what: string) => ShortTextList({ description: `Ids of the ${what} to exclude.` });
const belowClient = { excludedConnectionIds: excludedIds('connections') };
const belowDevice = { excludedClientIds: excludedIds('clients'), ...belowClient };
const belowUser = { excludedDeviceIds: excludedIds('devices'), ...belowDevice };

/** The `excluded...Ids` lists of a level: one for every level below it, in the order the records list them. */
export const excludedBelow = {
  channel: { excludedUserIds: excludedIds('users'), ...belowUser },
  user: belowUser,
  device: belowDevice,
  client: belowClient,
};
