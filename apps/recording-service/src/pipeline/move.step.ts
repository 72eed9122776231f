import { Inject, Injectable } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import path from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import { RecordingPaths } from '../files/paths.js';
import { STORAGE, type StorageTarget } from '../files/storage.js';
import {
  CHANNEL_RECORDING_TABLE,
  CONNECTION_RECORDING_TABLE,
  RecordingsStore,
} from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, ConnectionRecordingRow } from '../recordings/rows.js';
import { pruneEmptyDirs } from './files.js';
import { readyEvents } from './recording-events.js';
import { RecordingStages } from './recording-stages.js';
import type { PipelineStep } from './step-runner.js';

/** A move found its recording deleted (thrown to stop it; not a failure). */
class RecordingDeleted extends Error {
  constructor() {
    super('the recording was deleted while its files were being moved');
  }
}

/** Where a file went: its location, object key, size (null when moved by an earlier attempt) and move time. */
interface PlacedFile {
  path: string;
  key: string;
  size: number | null;
  seconds: number;
}
type PlaceFile = (file: string | null, key: string | null) => Promise<PlacedFile | null>;

/**
 * Moves every file of the recording from the work directory to the storage target. A recording
 * deleted meanwhile stops the move (before the next upload, or at the end), and what the move
 * stored goes with the deletion's files.
 */
@Injectable()
export class MoveStep implements PipelineStep {
  readonly name = 'move';

  constructor(
    private readonly ds: DataSource,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    @Inject(STORAGE) private readonly storage: StorageTarget,
    private readonly store: RecordingsStore,
    private readonly stages: RecordingStages,
  ) {}

  async run(r: ChannelRecordingRow): Promise<void> {
    const started = performance.now();
    const children = await this.stages.children(r.id);
    await this.ds.query(
      `UPDATE ${CHANNEL_RECORDING_TABLE} SET move_pending = file_path IS NOT NULL, audio_move_pending = audio_file_path IS NOT NULL, video_move_pending = video_file_path IS NOT NULL WHERE id = $1 AND NOT deleted`,
      [r.id],
    );
    await this.ds.query(
      `UPDATE ${CONNECTION_RECORDING_TABLE} SET audio_move_pending = audio_file_path IS NOT NULL, video_move_pending = video_file_path IS NOT NULL WHERE channel_recording_id = $1 AND NOT deleted`,
      [r.id],
    );
    const stored: string[] = [];
    const place: PlaceFile = async (file, key) => {
      if (!file) return null;
      const fileStarted = performance.now();
      // Moved by an earlier attempt.
      if (this.storage.holds(file) && key) return { path: file, key, size: null, seconds: 0 };
      if ((await this.stages.row(r.id))?.deleted) throw new RecordingDeleted();
      const put = await this.storage.put(
        file,
        this.paths.objectKey(r.organization_id, r.application_id, r.channel_id, r.id, path.basename(file)),
      );
      stored.push(put.location);
      return { path: put.location, key: put.key, size: put.size, seconds: (performance.now() - fileStarted) / 1000 };
    };
    try {
      await this.moveFiles(r, children, place, started);
    } catch (e) {
      if (!(e instanceof RecordingDeleted)) throw e;
      await this.stages.deletedDuring(r, 'move', stored);
      return;
    }
    await pruneEmptyDirs(this.paths.workDir(r.application_id, r.channel_id, r.id), this.paths.workRoot);
  }

  async fail(r: ChannelRecordingRow, error: string): Promise<void> {
    const failed = await this.stages.setStageAnnounced(
      r.id,
      'failed',
      { move_pending: false, audio_move_pending: false, video_move_pending: false, error: `move failed: ${error}` },
      (_m, fresh) => [this.stages.failedEvent('channel.recording.move.failed', fresh)],
      (m) =>
        m.query(
          `UPDATE ${CONNECTION_RECORDING_TABLE} SET audio_move_pending = false, video_move_pending = false WHERE channel_recording_id = $1 AND NOT deleted`,
          [r.id],
        ),
    );
    if (!failed) await this.stages.deletedDuring(r, 'move');
  }

  private async moveFiles(
    r: ChannelRecordingRow,
    children: ConnectionRecordingRow[],
    place: PlaceFile,
    started: number,
  ): Promise<void> {
    const main = await place(r.file_path, r.object_key);
    const audio = await place(r.audio_file_path, r.audio_object_key);
    const video = await place(r.video_file_path, r.video_object_key);
    for (const c of children) await this.moveConnectionFiles(c, place);
    const moved = {
      file_path: main?.path ?? null,
      object_key: main?.key ?? null,
      file_size: main?.size ?? r.file_size,
      audio_file_path: audio?.path ?? null,
      audio_object_key: audio?.key ?? null,
      audio_file_size: audio?.size ?? r.audio_file_size,
      audio_move_seconds: audio?.seconds ?? null,
      video_file_path: video?.path ?? null,
      video_object_key: video?.key ?? null,
      video_file_size: video?.size ?? r.video_file_size,
      video_move_seconds: video?.seconds ?? null,
      move_seconds: (performance.now() - started) / 1000,
      move_pending: false,
      audio_move_pending: false,
      video_move_pending: false,
      ready: Boolean(main),
      audio_ready: Boolean(audio),
      video_ready: Boolean(video),
      recording_path: this.storage.recordingPath(
        this.paths.recordingPrefix(r.organization_id, r.application_id, r.channel_id, r.id),
      ),
    };
    // Without muxing there is no channel file: the recording is done (its connection files are
    // ready) but not `ready` itself. With muxing, a missing channel file is a failure.
    const stage = main || !r.mux_enabled ? 'ready' : 'failed';
    if (!(await this.stages.setStageAnnounced(r.id, stage, moved, (m, fresh) => this.readyEvents(m, fresh))))
      throw new RecordingDeleted();
  }

  private async moveConnectionFiles(c: ConnectionRecordingRow, place: PlaceFile): Promise<void> {
    const audio = await place(c.audio_file_path, c.audio_object_key);
    const video = await place(c.video_file_path, c.video_object_key);
    await this.ds.query(
      `UPDATE ${CONNECTION_RECORDING_TABLE} SET audio_file_path = $2, audio_object_key = $3, audio_file_size = COALESCE($4, audio_file_size), audio_move_seconds = COALESCE($5, audio_move_seconds),
         audio_ready = $6, audio_move_pending = false,
         video_file_path = $7, video_object_key = $8, video_file_size = COALESCE($9, video_file_size), video_move_seconds = COALESCE($10, video_move_seconds),
         video_ready = $11, video_move_pending = false, modified_on = $12
       WHERE id = $1 AND NOT deleted`,
      [
        c.id,
        audio?.path ?? null,
        audio?.key ?? null,
        audio?.size ?? null,
        audio?.seconds ?? null,
        Boolean(audio),
        video?.path ?? null,
        video?.key ?? null,
        video?.size ?? null,
        video?.seconds ?? null,
        Boolean(video),
        Date.now(),
      ],
    );
  }

  /** The `*.ready` events of a moved recording and of its connection recordings (one moment: its stage change). */
  private async readyEvents(m: EntityManager, r: ChannelRecordingRow): Promise<DomainEvent[]> {
    return readyEvents(r, await this.stages.children(r.id, m), {
      channel: (x) => this.store.channelUrls(x),
      connection: (c) => this.store.connectionUrls(c),
    });
  }
}
