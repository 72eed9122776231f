import { sameSettings } from '@switchboard/contracts';
import {
  CONFIG_RECORDING,
  DEFAULT_SETTINGS,
  describeLevel,
  effectiveSettings,
  levelReaches,
  levelWrites,
  publicSettings,
  type LevelHash,
  type LevelSnapshot,
} from './settings.js';

/** A level hash as the scripts write it: values, `<field>@` = seq, lists as JSON. */
function level(seq: number, values: Record<string, boolean | string>, lists: Record<string, string[]> = {}): LevelHash {
  const out: LevelHash = {};
  for (const [k, v] of Object.entries(values)) {
    out[k] = typeof v === 'boolean' ? (v ? '1' : '0') : v;
    out[`${k}@`] = String(seq);
  }
  for (const [k, v] of Object.entries(lists)) out[k] = JSON.stringify(v);
  return out;
}

const empty: LevelSnapshot = { ch: {}, u: {}, d: {}, c: {}, n: {} };
const alice = { userId: 'alice', deviceId: 'a-phone', clientId: 'a-1', connectionId: 'cn-a' };
const bob = { userId: 'bob', deviceId: 'b-laptop', clientId: 'b-1', connectionId: 'cn-b' };

describe('effective settings', () => {
  it('are all off when no level sets anything', () => {
    expect(effectiveSettings(empty, alice)).toEqual(DEFAULT_SETTINGS);
  });

  it('a channel setting reaches every connection below it', () => {
    const levels = { ...empty, ch: level(1, { audioMuted: true, recording: true, recordingTag: 'daily' }) };
    for (const who of [alice, bob]) {
      expect(effectiveSettings(levels, who)).toEqual({
        ...DEFAULT_SETTINGS,
        audioMuted: true,
        recording: true,
        recordingTag: 'daily',
      });
    }
  });

  it("the channel config's recordingEnabled records by default; any level writing recording wins", () => {
    const ch = { ...level(1, { audioMuted: true }), [CONFIG_RECORDING]: '1' };
    expect(effectiveSettings({ ...empty, ch }, alice)).toEqual({
      ...DEFAULT_SETTINGS,
      audioMuted: true,
      recording: true,
    });
    expect(effectiveSettings({ ...empty, ch: { [CONFIG_RECORDING]: '0' } }, alice).recording).toBe(false);
    // An excluded user is not reached by the channel level's writes, but the config applies to every connection.
    expect(
      effectiveSettings({ ...empty, ch: { ...ch, ...level(2, {}, { excludedUserIds: ['alice'] }) } }, alice).recording,
    ).toBe(true);
    expect(effectiveSettings({ ...empty, ch, u: level(2, { recording: false }) }, alice).recording).toBe(false);
    expect(effectiveSettings({ ...empty, ch: { ...ch, ...level(3, { recording: false }) } }, bob).recording).toBe(
      false,
    );
  });

  it('a channel setting skips excluded users, devices, clients and connections', () => {
    for (const [list, id] of [
      ['excludedUserIds', 'alice'],
      ['excludedDeviceIds', 'a-phone'],
      ['excludedClientIds', 'a-1'],
      ['excludedConnectionIds', 'cn-a'],
    ] as const) {
      const levels = { ...empty, ch: level(1, { audioMuted: true }, { [list]: [id] }) };
      expect(effectiveSettings(levels, alice).audioMuted).toBe(false);
      expect(effectiveSettings(levels, bob).audioMuted).toBe(true);
    }
  });

  it('exclusions apply to the level that lists them, not to levels below', () => {
    const levels = {
      ...empty,
      ch: level(1, { videoMuted: true }, { excludedUserIds: ['alice'] }),
      c: level(2, { videoMuted: true }),
    };
    expect(effectiveSettings(levels, alice).videoMuted).toBe(true);
  });

  it('the most recent write wins across levels, whatever the level', () => {
    // Channel mute (1), then user unmute (2): the user is unmuted.
    const unmuted = { ...empty, ch: level(1, { audioMuted: true }), u: level(2, { audioMuted: false }) };
    expect(effectiveSettings(unmuted, alice).audioMuted).toBe(false);
    // Then the channel is muted again (3): everyone is muted, the user too.
    const remuted = { ...unmuted, ch: level(3, { audioMuted: true }) };
    expect(effectiveSettings(remuted, alice).audioMuted).toBe(true);
  });

  it('each setting is combined on its own', () => {
    const levels = {
      ...empty,
      ch: level(1, { audioMuted: true, videoMuted: true }),
      d: level(2, { videoMuted: false }),
      n: level(3, { audioUnmuteDisabled: true }),
    };
    expect(effectiveSettings(levels, alice)).toEqual({
      ...DEFAULT_SETTINGS,
      audioMuted: true,
      videoMuted: false,
      audioUnmuteDisabled: true,
    });
  });

  it('a client that has not opened a connection yet is not matched by connection exclusions', () => {
    const levels = { ...empty, ch: level(1, { recording: true }, { excludedConnectionIds: ['cn-a'] }) };
    expect(effectiveSettings(levels, { ...alice, connectionId: null }).recording).toBe(true);
  });

  it('ignores unreadable exclusion lists instead of failing', () => {
    const levels = { ...empty, ch: { ...level(1, { audioMuted: true }), excludedUserIds: 'not json' } };
    expect(levelReaches(levels.ch, alice)).toBe(true);
    expect(effectiveSettings(levels, alice).audioMuted).toBe(true);
  });

  it('publicSettings drops the recording mode; sameSettings compares the six fields', () => {
    const s = effectiveSettings({ ...empty, ch: level(1, { recordingMode: 'AudioVideo', recording: true }) }, alice);
    expect(s.recordingMode).toBe('AudioVideo');
    expect(publicSettings(s)).not.toHaveProperty('recordingMode');
    expect(sameSettings(publicSettings(s), publicSettings(s))).toBe(true);
    expect(sameSettings(publicSettings(s), publicSettings(DEFAULT_SETTINGS))).toBe(false);
  });
});

describe('level writes', () => {
  it('turn a patch into settings and replaced lists; null fields change nothing', () => {
    expect(
      levelWrites('channel', {
        audioMuted: true,
        videoMuted: null,
        recordingTag: 't',
        recordingMode: 'Audio',
        excludedUserIds: ['u1', 'u1', 'u2'],
        excludedClientIds: null,
      }),
    ).toEqual({
      set: { audioMuted: '1', recordingTag: 't', recordingMode: 'Audio' },
      lists: { excludedUserIds: '["u1","u2"]' },
    });
  });

  it('keep only the lists a level accepts', () => {
    const patch = {
      excludedUserIds: ['u'],
      excludedDeviceIds: ['d'],
      excludedClientIds: ['c'],
      excludedConnectionIds: ['n'],
    };
    expect(Object.keys(levelWrites('user', patch).lists).sort()).toEqual([
      'excludedClientIds',
      'excludedConnectionIds',
      'excludedDeviceIds',
    ]);
    expect(Object.keys(levelWrites('device', patch).lists).sort()).toEqual([
      'excludedClientIds',
      'excludedConnectionIds',
    ]);
    expect(Object.keys(levelWrites('client', patch).lists)).toEqual(['excludedConnectionIds']);
    expect(levelWrites('connection', patch).lists).toEqual({});
  });

  it('an empty list clears the exclusions', () => {
    expect(levelWrites('channel', { excludedUserIds: [] }).lists).toEqual({ excludedUserIds: '[]' });
  });

  it('describeLevel shows a stored level', () => {
    expect(describeLevel(level(4, { audioMuted: true, recordingTag: 'x' }, { excludedUserIds: ['u'] }))).toEqual({
      audioMuted: true,
      recordingTag: 'x',
      excludedUserIds: ['u'],
    });
  });
});
