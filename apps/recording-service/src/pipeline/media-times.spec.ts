import type { RecordingUpdateRow } from '../recordings/rows.js';
import { moderatedTimes, parseModerations } from './media-times.js';

const entry = (index: number, timestamp: number, audioMuted = false, videoMuted = false): RecordingUpdateRow => ({
  connection_recording_id: 'cr',
  index,
  timestamp: String(timestamp),
  connection_tag: null,
  audio_muted: audioMuted,
  video_muted: videoMuted,
  audio_disabled: false,
  video_disabled: false,
});

describe('moderatedTimes', () => {
  const timeline = [entry(0, 1000), entry(1, 4000, true), entry(2, 7000, false), entry(3, 8000, false, true)];

  it("moves the mute and the unmute to Janus's times", () => {
    const moved = moderatedTimes(timeline, [
      { at: 4120, audioMuted: true },
      { at: 7090, audioMuted: false },
    ]);
    expect([...moved]).toEqual([
      [1, 4120],
      [2, 7090],
    ]);
  });

  it('matches only an entry that turns that kind that way, near enough', () => {
    expect(moderatedTimes(timeline, [{ at: 4100, audioMuted: false }]).size).toBe(0);
    expect(moderatedTimes(timeline, [{ at: 9500, audioMuted: true }]).size).toBe(0);
    expect([...moderatedTimes(timeline, [{ at: 8200, videoMuted: true }])]).toEqual([[3, 8200]]);
  });

  it('never moves an entry past its neighbours', () => {
    expect([...moderatedTimes(timeline, [{ at: 8500, audioMuted: false }])]).toEqual([[2, 8000]]);
  });
});

describe('parseModerations', () => {
  it('keeps well-formed entries only', () => {
    expect(parseModerations('[{"at":5,"audioMuted":true},{"at":"x"},{"at":6,"videoMuted":"yes"}]')).toEqual([
      { at: 5, audioMuted: true },
    ]);
    expect(parseModerations('not json')).toEqual([]);
    expect(parseModerations(undefined)).toEqual([]);
  });
});
