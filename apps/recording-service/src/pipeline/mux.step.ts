import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingPaths } from '../files/paths.js';
import { extractArgs, planMux, runTool, type MuxInput } from '../media/ffmpeg.js';
import { RecordingsStore } from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, ConnectionRecordingRow, RecordingUpdateRow } from '../recordings/rows.js';
import { sizeOf } from './files.js';
import { PipelineQueues } from './pipeline-queues.js';
import { RecordingStages } from './recording-stages.js';
import type { PipelineStep } from './step-runner.js';

/** Builds the channel file (and its audio-only and video-only copies) from the connection files with ffmpeg. */
@Injectable()
export class MuxStep implements PipelineStep {
  readonly name = 'mux';

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    private readonly stages: RecordingStages,
    private readonly queues: PipelineQueues,
    private readonly store: RecordingsStore,
  ) {}

  async run(r: ChannelRecordingRow): Promise<void> {
    const started = performance.now();
    const dir = this.paths.workDir(r.application_id, r.channel_id, r.id);
    const children = await this.stages.children(r.id);
    const channelStart = Number(r.start_timestamp);
    const withFiles = children.filter((c) => c.audio_file_path || c.video_file_path);
    const updates = await this.store.updatesOf(withFiles.map((c) => c.id));
    const inputs = withFiles.map((c) => muxInput(c, updates.get(c.id) ?? [], channelStart));
    const duration = (Number(r.stop_timestamp ?? channelStart) - channelStart) / 1000;
    const part = path.join(dir, `${r.id}.mux.part`);
    const plan = planMux(inputs, duration, part);
    const signal = this.queues.stopSignal;
    await fs.mkdir(dir, { recursive: true });
    await runTool(this.config.ffmpegPath, plan.args, { signal });
    const file = path.join(dir, `${r.id}${plan.extension}`);
    await fs.rename(part, file);
    const audioFile = plan.hasAudio ? path.join(dir, `${r.id}.audio.ogg`) : null;
    const videoFile = plan.hasVideo ? path.join(dir, `${r.id}.video.webm`) : null;
    for (const [type, out] of [
      ['audio', audioFile],
      ['video', videoFile],
    ] as const) {
      if (!out) continue;
      await runTool(this.config.ffmpegPath, extractArgs(file, type, `${out}.part`), { signal });
      await fs.rename(`${out}.part`, out);
    }
    const moving = await this.stages.setStage(r.id, 'moving', {
      file_name: path.basename(file),
      file_path: file,
      file_size: await sizeOf(file),
      audio_file_name: audioFile ? path.basename(audioFile) : null,
      audio_file_path: audioFile,
      audio_file_size: audioFile ? await sizeOf(audioFile) : null,
      video_file_name: videoFile ? path.basename(videoFile) : null,
      video_file_path: videoFile,
      video_file_size: videoFile ? await sizeOf(videoFile) : null,
      mux_args: JSON.stringify(plan.args),
      mux_seconds: (performance.now() - started) / 1000,
      mux_pending: false,
      has_audio: plan.hasAudio,
      has_video: plan.hasVideo,
    });
    if (!moving) return this.stages.deletedDuring(r, 'mux');
    await this.queues.enqueue('move', r.id);
  }

  /** The channel file could not be built: say so, then still move the connection files. */
  async fail(r: ChannelRecordingRow, error: string): Promise<void> {
    const moving = await this.stages.setStageAnnounced(
      r.id,
      'moving',
      { mux_pending: false, error: `mux failed: ${error}` },
      (_m, fresh) => [this.stages.failedEvent('channel.recording.mux.failed', fresh)],
    );
    if (!moving) return this.stages.deletedDuring(r, 'mux');
    await this.queues.enqueue('move', r.id);
  }
}

/** A connection's files at their own first frames, with the stretches its timeline says were muted. */
function muxInput(c: ConnectionRecordingRow, updates: RecordingUpdateRow[], channelStart: number): MuxInput {
  const seconds = (at: string | null) => (Number(at ?? c.start_timestamp) - channelStart) / 1000;
  const stop = seconds(c.stop_timestamp);
  return {
    offsetSeconds: seconds(c.audio_first_frame_timestamp ?? c.video_first_frame_timestamp),
    videoOffsetSeconds: seconds(c.video_first_frame_timestamp ?? c.audio_first_frame_timestamp),
    audioFile: c.audio_file_path,
    videoFile: c.video_file_path,
    muted: {
      audio: mutedStretches(updates, (u) => u.audio_muted || u.audio_disabled, stop, seconds),
      video: mutedStretches(updates, (u) => u.video_muted || u.video_disabled, stop, seconds),
    },
  };
}

function mutedStretches(
  updates: RecordingUpdateRow[],
  isMuted: (u: RecordingUpdateRow) => boolean,
  stop: number,
  seconds: (at: string) => number,
): Array<[number, number]> {
  const stretches: Array<[number, number]> = [];
  let from: number | null = null;
  for (const u of updates) {
    if (isMuted(u) && from === null) from = seconds(u.timestamp);
    else if (!isMuted(u) && from !== null) {
      stretches.push([from, seconds(u.timestamp)]);
      from = null;
    }
  }
  if (from !== null) stretches.push([from, stop]);
  return stretches;
}
