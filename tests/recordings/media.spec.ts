/**
 * tools/media: the media server side of the recording tests writes real files that honour the mute
 * timeline (silence while audio is muted, black while video is muted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { intervals, probeFile, run, writeConnectionMedia } from '../../tools/media/media.mjs';

/** Loudest peak (dBFS) of an audio file between `from` and `from + seconds`. */
async function maxVolume(file: string, from: number, seconds: number): Promise<number> {
  const stats = await run('ffprobe', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `amovie=${file},atrim=start=${from}:duration=${seconds},astats=metadata=1:reset=0,ametadata=print:key=lavfi.astats.Overall.Peak_level:file=-`,
  ]);
  const levels = [...stats.matchAll(/Peak_level=(-?[\d.]+|-inf)/g)].map((m) =>
    m[1] === '-inf' ? -Infinity : Number(m[1]),
  );
  return Math.max(...levels);
}

/** Brightest luma of a video file between `from` and `from + seconds`. */
async function maxLuma(file: string, from: number, seconds: number): Promise<number> {
  const stats = await run('ffprobe', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `movie=${file},trim=start=${from}:duration=${seconds},signalstats,metadata=print:key=lavfi.signalstats.YMAX:file=-`,
  ]);
  return Math.max(...[...stats.matchAll(/YMAX=(\d+)/g)].map((m) => Number(m[1])));
}

describe('tools/media', () => {
  it('turns a mute timeline into intervals', () => {
    const timeline = [
      { at: 0, audioMuted: false, videoMuted: false },
      { at: 1, audioMuted: true, videoMuted: false },
      { at: 2, audioMuted: false, videoMuted: true },
    ];
    expect(intervals(timeline, 4, 'audio')).toEqual([[1, 2]]);
    expect(intervals(timeline, 4, 'video')).toEqual([[2, 4]]);
    expect(intervals([{ at: 0, audioDisabled: true }], 3, 'audio')).toEqual([[0, 3]]);
  });

  it('writes Opus and VP8 files of the duration, silent and black while muted', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-media-'));
    try {
      const written = await writeConnectionMedia(
        {
          directory: dir,
          audioBase: 'c.audio',
          videoBase: 'c.video',
          startTimestamp: 0,
          stopTimestamp: 3000,
          updates: [
            { timestamp: 0, audioMuted: false, videoMuted: false, audioDisabled: false, videoDisabled: false },
            { timestamp: 1000, audioMuted: true, videoMuted: true, audioDisabled: false, videoDisabled: false },
            { timestamp: 2000, audioMuted: false, videoMuted: false, audioDisabled: false, videoDisabled: false },
          ],
        },
        { frequency: 440 },
      );
      expect(fs.readdirSync(dir).sort()).toEqual(['c.audio.ogg', 'c.video.webm']);
      const audio = await probeFile(written.audioFile!);
      expect(audio.streams).toEqual([expect.objectContaining({ type: 'audio', codec: 'opus' })]);
      expect(audio.durationSeconds).toBeCloseTo(3, 1);
      const video = await probeFile(written.videoFile!);
      expect(video.streams).toEqual([
        expect.objectContaining({ type: 'video', codec: 'vp8', width: 320, height: 240 }),
      ]);
      expect(video.durationSeconds).toBeCloseTo(3, 1);
      expect(await maxVolume(written.audioFile!, 1.2, 0.6)).toBeLessThan(-60);
      expect(await maxVolume(written.audioFile!, 0.2, 0.6)).toBeGreaterThan(-30);
      expect(await maxLuma(written.videoFile!, 1.2, 0.6)).toBeLessThan(20);
      expect(await maxLuma(written.videoFile!, 2.2, 0.6)).toBeGreaterThan(100);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
