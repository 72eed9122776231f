import { describeContent, planMux, runTool, ToolError, ToolInterrupted } from './ffmpeg.js';

describe('planMux', () => {
  it('tiles every video, delays and mixes every audio, and cuts at the channel duration', () => {
    const plan = planMux(
      [
        { offsetSeconds: 0, audioFile: '/w/a.audio.ogg', videoFile: '/w/a.video.webm' },
        { offsetSeconds: 0.5, audioFile: '/w/b.audio.ogg', videoFile: '/w/b.video.webm' },
        { offsetSeconds: 1.25, audioFile: '/w/c.audio.ogg', videoFile: null },
      ],
      4,
      '/w/out.part',
    );
    expect(plan).toMatchObject({ hasAudio: true, hasVideo: true, extension: '.webm' });
    const inputs = plan.args.filter((_, i) => plan.args[i - 1] === '-i');
    expect(inputs).toEqual([
      '/w/a.video.webm',
      '/w/a.audio.ogg',
      '/w/b.video.webm',
      '/w/b.audio.ogg',
      '/w/c.audio.ogg',
    ]);
    const graph = plan.args[plan.args.indexOf('-filter_complex') + 1]!;
    expect(graph).toContain('tpad=start_duration=0.500');
    expect(graph).toContain('adelay=1250|1250');
    expect(graph).toContain('xstack=inputs=2:layout=0_0|320_0');
    expect(graph).toContain('amix=inputs=3');
    expect(plan.args.slice(-5)).toEqual(['-t', '4.000', '-f', 'webm', '/w/out.part']);
  });

  it('makes an Ogg file when nobody sent video, and refuses to mux nothing', () => {
    const plan = planMux([{ offsetSeconds: 0, audioFile: '/w/a.ogg', videoFile: null }], 2, '/w/o');
    expect(plan).toMatchObject({ hasVideo: false, extension: '.ogg' });
    expect(plan.args).not.toContain('libvpx');
    expect(() => planMux([{ offsetSeconds: 0, audioFile: null, videoFile: null }], 2, '/w/o')).toThrow(
      /nothing to mux/,
    );
  });

  it('starts each video at its own first frame, and blacks and silences the muted stretches', () => {
    const plan = planMux(
      [
        {
          offsetSeconds: 0.2,
          videoOffsetSeconds: 0.45,
          audioFile: '/w/a.ogg',
          videoFile: '/w/a.webm',
          muted: {
            audio: [[3, 6]],
            video: [
              [1, 2],
              [7.5, 9],
            ],
          },
        },
      ],
      10,
      '/w/o',
    );
    const graph = plan.args[plan.args.indexOf('-filter_complex') + 1]!;
    expect(graph).toContain('tpad=start_duration=0.450');
    expect(graph).toContain('adelay=200|200');
    expect(graph).toContain("volume=0:enable='between(t,3.000,6.000)'");
    expect(graph).toContain("drawbox=color=black:t=fill:enable='between(t,1.000,2.000)+between(t,7.500,9.000)'");
    // Gaps in the audio (nothing sent while moderated) become silence.
    expect(graph).toContain('aresample=48000:async=1');
  });

  it('lays out a grid of up to four tiles per row of two', () => {
    const four = Array.from({ length: 4 }, (_, i) => ({
      offsetSeconds: 0,
      audioFile: null,
      videoFile: `/w/${i}.webm`,
    }));
    const graph = planMux(four, 1, '/w/o').args.find((a) => a.includes('xstack'))!;
    expect(graph).toContain('layout=0_0|320_0|0_240|320_240');
  });
});

describe('describeContent', () => {
  it('names the container, codec and size', () => {
    const probe = {
      formatName: 'matroska,webm',
      durationSeconds: 1,
      startSeconds: 0,
      streams: [{ index: 0, codecType: 'video', codecName: 'vp8', width: 320, height: 240 }],
    };
    expect(describeContent(probe, 'video')).toBe('video/webm; codecs=vp8; width=320; height=240');
    expect(describeContent(probe, 'audio')).toBeNull();
  });
});

describe('runTool', () => {
  it('answers the output of a tool that succeeds, and the end of its stderr when it fails', async () => {
    await expect(runTool('sh', ['-c', 'echo done'])).resolves.toBe('done\n');
    await expect(runTool('sh', ['-c', 'echo broken >&2; exit 3'])).rejects.toThrow(
      new ToolError('sh exited with 3: broken'),
    );
  });

  it('kills the tool when the signal is aborted, and says it was interrupted rather than failed', async () => {
    const stop = new AbortController();
    const running = runTool('sleep', ['30'], { signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    await expect(running).rejects.toBeInstanceOf(ToolInterrupted);
    await expect(runTool('sleep', ['30'], { signal: stop.signal })).rejects.toBeInstanceOf(ToolInterrupted);
  });
});
