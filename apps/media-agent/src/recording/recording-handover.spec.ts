import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RecordingTarget } from '@switchboard/contracts';
import type { JsonLogger } from '@switchboard/service-kit';
import type { MjrConverter } from './mjr-convert.js';
import { RecordingHandover } from './recording-handover.js';
import { RecordingDirectory, type RecordingManifest } from './recording-manifest.js';
import type { RecordingStore } from './recording-store.js';

const ref = { applicationId: 'app', channelId: 'ch', connectionId: 'cam' };

function targetOf(id: string, startTimestamp: number, stopTimestamp: number | null): RecordingTarget {
  return {
    connectionRecordingId: id,
    channelRecordingId: `ch-${id}`,
    directory: '/unused',
    audioBase: `${id}.audio`,
    videoBase: `${id}.video`,
    hasAudio: true,
    hasVideo: true,
    startTimestamp,
    stopTimestamp,
    updates: [],
  };
}

describe('RecordingHandover', () => {
  let dir: string;
  let directory: RecordingDirectory;
  /** What `media.recordingTarget` answers now (recording-service's latest recording of the connection). */
  let current: RecordingTarget | null;
  let uploads: Array<{ channelRecordingId: string; base: string; file: string }>;
  const logged: string[] = [];
  const logger = { event: (_level: string, msg: string) => void logged.push(msg) } as unknown as JsonLogger;
  const store = {
    target: async () => current,
    upload: async (channelRecordingId: string, base: string, converted: { file: string }) =>
      void uploads.push({ channelRecordingId, base, file: path.basename(converted.file) }),
  } as unknown as RecordingStore;
  const converter = {
    unavailable: async () => null,
    convert: async (mjr: string, outDir: string, base: string) => {
      fs.mkdirSync(outDir, { recursive: true });
      const file = path.join(outDir, `${base}.${mjr.includes('-audio-') ? 'ogg' : 'webm'}`);
      fs.writeFileSync(file, 'media');
      return { file, firstFrameMs: 1 };
    },
  } as unknown as MjrConverter;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-agent-rec-'));
    directory = new RecordingDirectory(dir);
    await directory.prepare();
    current = null;
    uploads = [];
    logged.length = 0;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function started(id: string, startedAt: number): Promise<RecordingManifest> {
    const manifest: RecordingManifest = { id, ...ref, startedAt, stoppedAt: null, target: null };
    await directory.save(manifest);
    fs.writeFileSync(path.join(dir, `${id}-audio-0.mjr`), 'MJR00002');
    fs.writeFileSync(path.join(dir, `${id}-video-1.mjr`), 'MJR00002');
    return manifest;
  }

  const handover = (timeoutMs = 60000) =>
    new RecordingHandover(directory, store, converter, logger, { handoverTimeoutMs: timeoutMs });

  it('names the files after the connection recording, uploads them and leaves nothing behind', async () => {
    const subject = handover();
    const manifest = await started('local-1', Date.now());
    current = targetOf('cr-1', Date.now(), null);
    subject.track(manifest);
    manifest.stoppedAt = Date.now();
    await subject.handOver(manifest);
    expect(uploads).toEqual([
      { channelRecordingId: 'ch-cr-1', base: 'cr-1.audio', file: 'cr-1.audio.ogg' },
      { channelRecordingId: 'ch-cr-1', base: 'cr-1.video', file: 'cr-1.video.webm' },
    ]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a start after a stop waits for a connection recording the connection has not used yet', async () => {
    const subject = handover();
    const first = await started('local-1', Date.now() - 5000);
    current = targetOf('cr-1', Date.now() - 5000, null);
    subject.track(first);
    first.stoppedAt = Date.now() - 1000;
    const second = await started('local-2', Date.now());
    subject.track(second);
    // recording-service has not applied the restart yet: it still names the first recording.
    current = targetOf('cr-1', Date.now() - 5000, Date.now() - 1000);
    second.stoppedAt = Date.now();
    const handing = subject.handOver(second);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(second.target).toBeNull();
    current = targetOf('cr-2', Date.now(), Date.now());
    await handing;
    expect(uploads.map((u) => u.base)).toEqual(['cr-2.audio', 'cr-2.video']);
    await subject.handOver(first);
    expect(uploads.map((u) => u.base).slice(2)).toEqual(['cr-1.audio', 'cr-1.video']);
  });

  it('takes no recording that stopped before this one started', async () => {
    const subject = handover(300);
    const manifest = await started('local-1', Date.now());
    current = targetOf('cr-old', Date.now() - 60000, Date.now() - 30000);
    subject.track(manifest);
    manifest.stoppedAt = Date.now();
    await subject.handOver(manifest);
    expect(uploads).toEqual([]);
    expect(logged).toContain('recording not handed over in time; its files are dropped');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a manifest on disk survives a restart with its target', async () => {
    const manifest = await started('local-1', Date.now());
    current = targetOf('cr-1', Date.now(), null);
    handover().track(manifest);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [loaded] = await directory.load();
    expect(loaded).toMatchObject({ id: 'local-1', ...ref, stoppedAt: null, target: { connectionRecordingId: 'cr-1' } });
    expect(await directory.mjrFiles('local-1')).toEqual({
      audio: [path.join(dir, 'local-1-audio-0.mjr')],
      video: [path.join(dir, 'local-1-video-1.mjr')],
    });
  });
});
