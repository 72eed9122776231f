import { DomainError } from '@switchboard/contracts';
import type { LevelHash, LevelSnapshot } from './settings.js';
import { checkUnmute, unmutedKinds } from './unmute.js';

/** A level hash as the scripts write it: values with their seq, lists as JSON. */
function level(seq: number, values: Record<string, boolean>, lists: Record<string, string[]> = {}): LevelHash {
  const out: LevelHash = {};
  for (const [k, v] of Object.entries(values)) Object.assign(out, { [k]: v ? '1' : '0', [`${k}@`]: String(seq) });
  for (const [k, v] of Object.entries(lists)) out[k] = JSON.stringify(v);
  return out;
}

const empty: LevelSnapshot = { ch: {}, u: {}, d: {}, c: {}, n: {} };
const who = { userId: 'alice', deviceId: 'a-phone', clientId: 'a-1', connectionId: 'cn-a' };
const refusal = (fn: () => void): unknown => {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof DomainError ? { code: e.code, fields: e.details.map((d) => d.field) } : e;
  }
};

describe('a client unmute against the settings', () => {
  it('names the kinds an update unmutes', () => {
    expect(unmutedKinds({ localAudioMuted: false, localVideoMuted: true })).toEqual(['audio']);
    expect(unmutedKinds({ localVideoMuted: false })).toEqual(['video']);
    expect(unmutedKinds({})).toEqual([]);
  });

  it('is refused while an operator mute and unmute-disabled reach the connection, whatever the client reported', () => {
    const levels = { ...empty, ch: level(1, { audioMuted: true }), u: level(2, { audioUnmuteDisabled: true }) };
    expect(refusal(() => checkUnmute(['audio'], { localAudioMuted: '0' }, levels, who))).toEqual({
      code: 'Forbidden',
      fields: ['localAudioMuted'],
    });
    expect(refusal(() => checkUnmute(['audio'], {}, levels, who))).toEqual({
      code: 'Forbidden',
      fields: ['localAudioMuted'],
    });
    expect(refusal(() => checkUnmute(['video'], {}, levels, who))).toBeNull();
  });

  it('is refused while unmute-disabled reaches a connection the client muted itself (update or stream flag)', () => {
    const levels = { ...empty, n: level(1, { videoUnmuteDisabled: true }) };
    expect(refusal(() => checkUnmute(['video'], { localVideoMuted: '1' }, levels, who))).toEqual({
      code: 'Forbidden',
      fields: ['localVideoMuted'],
    });
    expect(
      refusal(() =>
        checkUnmute(
          ['video'],
          { streams: JSON.stringify({ video: { direction: 'sendrecv', muted: true } }) },
          levels,
          who,
        ),
      ),
    ).toEqual({ code: 'Forbidden', fields: ['localVideoMuted'] });
    expect(refusal(() => checkUnmute(['video'], {}, levels, who))).toBeNull();
  });

  it('is allowed once unmuting is enabled again, or when the level excludes the connection', () => {
    const lifted = {
      ...empty,
      ch: level(1, { audioMuted: true, audioUnmuteDisabled: true }),
      c: level(2, { audioUnmuteDisabled: false }),
    };
    expect(refusal(() => checkUnmute(['audio'], {}, lifted, who))).toBeNull();
    const excluded = {
      ...empty,
      ch: level(1, { audioMuted: true, audioUnmuteDisabled: true }, { excludedConnectionIds: ['cn-a'] }),
    };
    expect(refusal(() => checkUnmute(['audio'], {}, excluded, who))).toBeNull();
  });
});
