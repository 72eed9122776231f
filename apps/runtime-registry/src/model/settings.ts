/**
 * Recording and mute settings across the five levels that reach a connection (channel > user >
 * device > client in channel > connection): exclusions, the latest write wins, the channel config's
 * default. The rules: README, "Settings" and "Channel config `recordingEnabled`".
 */
import type {
  ChannelPatch,
  ClientInChannelPatch,
  ConnectionPatch,
  DeviceInChannelPatch,
  EffectiveSettings,
  RecordingModeExtra,
  UserInChannelPatch,
} from '@switchboard/contracts';

export const FLAG_SETTINGS = [
  'recording',
  'audioMuted',
  'videoMuted',
  'audioUnmuteDisabled',
  'videoUnmuteDisabled',
] as const;
export const TEXT_SETTINGS = ['recordingTag', 'recordingMode'] as const;
export const EXCLUSION_LISTS = [
  'excludedUserIds',
  'excludedDeviceIds',
  'excludedClientIds',
  'excludedConnectionIds',
] as const;

export type ExclusionList = (typeof EXCLUSION_LISTS)[number];

/** A settings hash as stored in Redis (see keys.ts): `<setting>`, `<setting>@` (seq), excluded lists (JSON). */
export type LevelHash = Record<string, string>;

export const LEVELS = ['channel', 'user', 'device', 'client', 'connection'] as const;
export type SettingsLevel = (typeof LEVELS)[number];

/** The five levels of one connection, as read in one atomic step. */
export interface LevelSnapshot {
  ch: LevelHash;
  u: LevelHash;
  d: LevelHash;
  c: LevelHash;
  n: LevelHash;
}

export interface ConnectionIdentity {
  userId: string;
  deviceId: string;
  clientId: string;
  /** null: the settings a client gets in a channel before it opens a connection. */
  connectionId: string | null;
}

/** Effective settings plus the recording mode (kept for the recording pipeline). */
export interface ResolvedSettings extends EffectiveSettings {
  recordingMode: string | null;
}

export const DEFAULT_SETTINGS: ResolvedSettings = {
  recording: false,
  recordingTag: null,
  recordingMode: null,
  audioMuted: false,
  videoMuted: false,
  audioUnmuteDisabled: false,
  videoUnmuteDisabled: false,
};

/**
 * Field of the channel settings hash (`ch:<ch>:cfg`) holding the channel config's `recordingEnabled`
 * ('1' / '0') as resolved when the channel activated; not a level write (no `@` seq).
 */
export const CONFIG_RECORDING = 'configRecording';

const LEVEL_KEYS: ReadonlyArray<keyof LevelSnapshot> = ['ch', 'u', 'd', 'c', 'n'];

function parseList(raw: string | undefined): string[] {
  if (!raw) return [];
  try {
    const value = JSON.parse(raw) as unknown;
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether a level reaches the connection (it is in none of the level's excluded lists). */
export function levelReaches(level: LevelHash, who: ConnectionIdentity): boolean {
  if (parseList(level.excludedUserIds).includes(who.userId)) return false;
  if (parseList(level.excludedDeviceIds).includes(who.deviceId)) return false;
  if (parseList(level.excludedClientIds).includes(who.clientId)) return false;
  if (who.connectionId !== null && parseList(level.excludedConnectionIds).includes(who.connectionId)) return false;
  return true;
}

/** Combines the levels into what applies to one connection. */
export function effectiveSettings(levels: LevelSnapshot, who: ConnectionIdentity): ResolvedSettings {
  const out: ResolvedSettings = { ...DEFAULT_SETTINGS, recording: levels.ch?.[CONFIG_RECORDING] === '1' };
  const best: Record<string, number> = {};
  for (const key of LEVEL_KEYS) {
    const level = levels[key] ?? {};
    if (!levelReaches(level, who)) continue;
    for (const field of [...FLAG_SETTINGS, ...TEXT_SETTINGS]) {
      const value = level[field];
      if (value === undefined) continue;
      const seq = Number(level[`${field}@`] ?? 0);
      if (seq < (best[field] ?? -1)) continue;
      best[field] = seq;
      if ((FLAG_SETTINGS as readonly string[]).includes(field))
        (out as unknown as Record<string, boolean>)[field] = value === '1';
      else (out as unknown as Record<string, string | null>)[field] = value;
    }
  }
  return out;
}

/** The EffectiveSettings of the contract (without recordingMode). */
export function publicSettings(s: ResolvedSettings): EffectiveSettings {
  return {
    recording: s.recording,
    recordingTag: s.recordingTag,
    audioMuted: s.audioMuted,
    videoMuted: s.videoMuted,
    audioUnmuteDisabled: s.audioUnmuteDisabled,
    videoUnmuteDisabled: s.videoUnmuteDisabled,
  };
}

type AnyLevelPatch = (
  ChannelPatch | UserInChannelPatch | DeviceInChannelPatch | ClientInChannelPatch | ConnectionPatch
) &
  RecordingModeExtra;

/** Which excluded lists each level accepts (the patch bodies of service-spec 2.A). */
export const LEVEL_LISTS: Record<SettingsLevel, readonly ExclusionList[]> = {
  channel: ['excludedUserIds', 'excludedDeviceIds', 'excludedClientIds', 'excludedConnectionIds'],
  user: ['excludedDeviceIds', 'excludedClientIds', 'excludedConnectionIds'],
  device: ['excludedClientIds', 'excludedConnectionIds'],
  client: ['excludedConnectionIds'],
  connection: [],
};

/** Turns a level patch into the hash writes: settings (ordered by seq) and replaced lists. */
export function levelWrites(
  level: SettingsLevel,
  patch: AnyLevelPatch,
): { set: Record<string, string>; lists: Record<string, string> } {
  const set: Record<string, string> = {};
  const lists: Record<string, string> = {};
  const p = patch as Record<string, unknown>;
  for (const field of FLAG_SETTINGS) {
    const v = p[field];
    if (typeof v === 'boolean') set[field] = v ? '1' : '0';
  }
  for (const field of TEXT_SETTINGS) {
    const v = p[field];
    if (typeof v === 'string') set[field] = v;
  }
  for (const list of LEVEL_LISTS[level]) {
    const v = p[list];
    if (Array.isArray(v))
      lists[list] = JSON.stringify([...new Set(v.filter((x): x is string => typeof x === 'string'))]);
  }
  return { set, lists };
}

/** The level's settings as stored (values and lists), for diagnostics and tests. */
export function describeLevel(level: LevelHash): Partial<ResolvedSettings> & Partial<Record<ExclusionList, string[]>> {
  const out: Record<string, unknown> = {};
  for (const f of FLAG_SETTINGS) if (level[f] !== undefined) out[f] = level[f] === '1';
  for (const f of TEXT_SETTINGS) if (level[f] !== undefined) out[f] = level[f];
  for (const l of EXCLUSION_LISTS) if (level[l] !== undefined) out[l] = parseList(level[l]);
  return out as Partial<ResolvedSettings> & Partial<Record<ExclusionList, string[]>>;
}
