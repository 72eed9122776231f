import { Inject, Injectable } from '@nestjs/common';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import path from 'node:path';
import { DataSource } from 'typeorm';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingPaths, audioBase, videoBase } from '../files/paths.js';
import { describeContent, probe } from '../media/ffmpeg.js';
import { CONNECTION_RECORDING_TABLE, RECORDING_UPDATE_TABLE } from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, RecordingUpdateRow } from '../recordings/rows.js';
import { findMediaFile, sizeOf, sleep } from './files.js';
import { IngestUploads } from './ingest-uploads.js';
import { moderatedTimes } from './media-times.js';
import { PipelineQueues } from './pipeline-queues.js';
import { RecordingStages } from './recording-stages.js';
import type { PipelineStep } from './step-runner.js';

/** How often the ingest looks again for the media server's files. */
const POLL_MS = 250;

/**
 * Waits (until `stage_changed_on + RECORDINGS_INGEST_TIMEOUT_MS`, a deadline that survives
 * restarts) for the media server's files of every connection recording (written into the work
 * directory, or uploaded by a media-agent: `IngestUploads`), probes them, and records
 * names, paths, sizes, content and first/last frame timestamps.
 */
@Injectable()
export class IngestStep implements PipelineStep {
  readonly name = 'ingest';

  constructor(
    private readonly ds: DataSource,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    private readonly stages: RecordingStages,
    private readonly queues: PipelineQueues,
    private readonly logger: JsonLogger,
    private readonly uploads: IngestUploads,
  ) {}

  async run(r: ChannelRecordingRow): Promise<void> {
    const dir = this.paths.workDir(r.application_id, r.channel_id, r.id);
    const deadline = Number(r.stage_changed_on) + this.config.recordingsIngestTimeoutMs;
    let children = await this.stages.children(r.id);
    const look = async () =>
      Promise.all(
        children.map(async (c) => ({
          c,
          audio: c.has_audio ? await this.mediaFile(r.id, dir, audioBase(c.id)) : null,
          video: c.has_video ? await this.mediaFile(r.id, dir, videoBase(c.id)) : null,
        })),
      );
    let found = await look();
    while (!found.every((f) => (!f.c.has_audio || f.audio) && (!f.c.has_video || f.video)) && Date.now() < deadline) {
      if (this.queues.stopSignal.aborted) throw new Error('the service is stopping');
      await sleep(POLL_MS);
      children = await this.stages.children(r.id);
      found = await look();
    }
    let anyFile = false;
    let allIngested = true;
    let hasAudio = false;
    let hasVideo = false;
    for (const { c, audio, video } of found) {
      const start = Number(c.start_timestamp);
      const audioProbe = audio ? await this.probeOrNull(audio) : null;
      const videoProbe = video ? await this.probeOrNull(video) : null;
      const audioFirst = audioProbe ? this.firstFrame(audio!, start, audioProbe.startSeconds) : null;
      const videoFirst = videoProbe ? this.firstFrame(video!, start, videoProbe.startSeconds) : null;
      const ingested = (!c.has_audio || Boolean(audioProbe)) && (!c.has_video || Boolean(videoProbe));
      allIngested &&= ingested;
      anyFile ||= Boolean(audioProbe || videoProbe);
      hasAudio ||= Boolean(audioProbe);
      hasVideo ||= Boolean(videoProbe);
      await this.ds.query(
        `UPDATE ${CONNECTION_RECORDING_TABLE} SET ingested = $2, modified_on = $3,
           audio_file_name = COALESCE($4, audio_file_name), audio_file_path = $5, audio_file_size = $6, audio_content = $7,
           audio_first_frame_timestamp = COALESCE($8, audio_first_frame_timestamp), audio_last_frame_timestamp = COALESCE($9, audio_last_frame_timestamp),
           video_file_name = COALESCE($10, video_file_name), video_file_path = $11, video_file_size = $12, video_content = $13,
           video_first_frame_timestamp = COALESCE($14, video_first_frame_timestamp), video_last_frame_timestamp = COALESCE($15, video_last_frame_timestamp),
           video_delay = $16
         WHERE id = $1 AND NOT deleted`,
        [
          c.id,
          ingested,
          Date.now(),
          audio ? path.basename(audio) : null,
          audioProbe ? audio : null,
          audioProbe ? await sizeOf(audio!) : null,
          audioProbe ? describeContent(audioProbe, 'audio') : null,
          audioFirst,
          audioProbe && audioFirst !== null ? audioFirst + Math.round(audioProbe.durationSeconds * 1000) : null,
          video ? path.basename(video) : null,
          videoProbe ? video : null,
          videoProbe ? await sizeOf(video!) : null,
          videoProbe ? describeContent(videoProbe, 'video') : null,
          videoFirst,
          videoProbe && videoFirst !== null ? videoFirst + Math.round(videoProbe.durationSeconds * 1000) : null,
          audioFirst !== null && videoFirst !== null ? (videoFirst - audioFirst) / 1000 : null,
        ],
      );
      await this.applyExtras(c.id, [audio, video]);
    }
    if (!anyFile) {
      const failed = await this.stages.setStageAnnounced(
        r.id,
        'failed',
        { ingested: false, mux_pending: false, error: 'no media file was written for any connection recording' },
        (_m, fresh) => (fresh.mux_enabled ? [this.stages.failedEvent('channel.recording.mux.failed', fresh)] : []),
      );
      if (!failed) await this.stages.deletedDuring(r, 'ingest');
      return;
    }
    const next = r.mux_enabled ? 'muxing' : 'moving';
    if (
      !(await this.stages.setStage(r.id, next, {
        ingested: allIngested,
        has_audio: hasAudio,
        has_video: hasVideo,
        ...(next === 'moving' ? { mux_pending: false } : {}),
      }))
    ) {
      await this.stages.deletedDuring(r, 'ingest');
      return;
    }
    await this.queues.enqueue(r.mux_enabled ? 'mux' : 'move', r.id);
  }

  async fail(r: ChannelRecordingRow, message: string): Promise<void> {
    if (!(await this.stages.setStage(r.id, 'failed', { error: message, mux_pending: false })))
      await this.stages.deletedDuring(r, 'ingest');
  }

  /**
   * The timeline's operator mutes at the times Janus carried them out (what the files show), not the
   * requests'; a recording the media server's crash cut off is marked so in its `metadata`.
   */
  private async applyExtras(connectionRecordingId: string, files: Array<string | null>): Promise<void> {
    const extras = files.flatMap((file) => (file ? [this.uploads.takeExtras(file)] : []));
    const interrupted = extras.find((x) => x.interrupted)?.interrupted;
    if (interrupted) await this.markInterrupted(connectionRecordingId, interrupted);
    const moderations = extras.find((x) => x.moderations.length > 0)?.moderations ?? [];
    if (moderations.length === 0) return;
    const updates = (await this.ds.query(
      `SELECT * FROM ${RECORDING_UPDATE_TABLE} WHERE connection_recording_id = $1 ORDER BY index`,
      [connectionRecordingId],
    )) as RecordingUpdateRow[];
    for (const [index, timestamp] of moderatedTimes(updates, moderations))
      await this.ds.query(
        `UPDATE ${RECORDING_UPDATE_TABLE} SET timestamp = $3 WHERE connection_recording_id = $1 AND index = $2`,
        [connectionRecordingId, index, timestamp],
      );
  }

  private async markInterrupted(connectionRecordingId: string, reason: string): Promise<void> {
    const [row] = (await this.ds.query(`SELECT metadata FROM ${CONNECTION_RECORDING_TABLE} WHERE id = $1`, [
      connectionRecordingId,
    ])) as Array<{ metadata: string | null }>;
    let metadata: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(row?.metadata ?? '{}') as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) metadata = parsed as Record<string, unknown>;
    } catch {
      metadata = { text: row?.metadata };
    }
    await this.ds.query(`UPDATE ${CONNECTION_RECORDING_TABLE} SET metadata = $2 WHERE id = $1`, [
      connectionRecordingId,
      JSON.stringify({ ...metadata, interrupted: true, interruptedReason: reason }),
    ]);
  }

  /** A file written into the work directory (a local media server), or else one a media-agent uploaded. */
  private async mediaFile(channelRecordingId: string, dir: string, base: string): Promise<string | null> {
    return (await findMediaFile(dir, base)) ?? (await this.uploads.take(channelRecordingId, base, dir));
  }

  /** The uploader's first-frame time when it sent one, else the recording's start plus the file's start. */
  private firstFrame(file: string, recordingStart: number, startSeconds: number): number {
    return this.uploads.takeFirstFrame(file) ?? recordingStart + Math.round(startSeconds * 1000);
  }

  private async probeOrNull(file: string) {
    try {
      const probed = await probe(this.config.ffprobePath, file);
      return probed.streams.length > 0 ? probed : null;
    } catch (e) {
      this.logger.event('warn', 'a recording file could not be probed; it is ignored', {
        file,
        error: (e as Error).message,
      });
      return null;
    }
  }
}
