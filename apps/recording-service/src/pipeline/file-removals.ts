import { Inject, Injectable } from '@nestjs/common';
import { JsonLogger, redeliveryDelayMs } from '@switchboard/service-kit';
import path from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import { RecordingPaths } from '../files/paths.js';
import { STORAGE, type StorageTarget } from '../files/storage.js';
import { RecordingMetrics } from '../metrics.js';
import { pruneEmptyDirs, removeTree } from './files.js';

export const FILE_REMOVAL = 'recording.file_removal';
/** Retries of a failing removal: 1 s after the first failure, doubling, at most every 10 minutes. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 600_000;
/** Failed attempts after which a removal is reported as stuck (error log, once). */
const STUCK_AFTER = 8;
/** Removals done this long ago are forgotten (a step of the deleted recording cannot come back that late). */
const KEEP_DONE_MS = 7 * 24 * 3600_000;

interface RemovalRow {
  channel_recording_id: string;
  organization_id: string;
  application_id: string;
  channel_id: string;
  locations: string[];
  revision: number;
  attempts: number;
}

/** What a removal needs to know of its recording. */
export interface RemovedRecording {
  id: string;
  organization_id: string;
  application_id: string;
  channel_id: string;
}

/**
 * The files of deleted channel recordings still to be removed (`recording.file_removal`). A
 * deletion that removes files `schedule`s its removal in its own transaction and then `run`s it;
 * when the storage target fails (or the process dies first) the row stays and the sweeper runs it
 * again (`runDue`), with a growing delay, until it succeeds. A removal is idempotent: the work
 * directory, the named locations and everything under the recording's key prefix go, missing
 * ones are fine.
 */
@Injectable()
export class FileRemovals {
  constructor(
    private readonly ds: DataSource,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    @Inject(STORAGE) private readonly storage: StorageTarget,
    private readonly logger: JsonLogger,
    private readonly metrics: RecordingMetrics,
  ) {}

  /**
   * Records, in the caller's transaction, that the recording's files are to be removed (adding `locations` to a pending
   * or done one).
   */
  async schedule(m: EntityManager, r: RemovedRecording, locations: string[]): Promise<void> {
    const now = Date.now();
    await m.query(
      `INSERT INTO ${FILE_REMOVAL} AS f (channel_recording_id, organization_id, application_id, channel_id, locations, next_attempt_on, created_on)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (channel_recording_id) DO UPDATE SET
         locations = ARRAY(SELECT DISTINCT unnest(f.locations || EXCLUDED.locations)),
         revision = f.revision + 1, attempts = 0, next_attempt_on = EXCLUDED.next_attempt_on, done_on = NULL, last_error = NULL`,
      [r.id, r.organization_id, r.application_id, r.channel_id, locations, now],
    );
  }

  /**
   * A pipeline step found its recording deleted after it may have written or stored files: when the
   * deletion removed files (a removal exists, pending or done), those go too. Answers whether it did.
   */
  async reopen(r: RemovedRecording, locations: string[]): Promise<boolean> {
    const exists =
      ((await this.ds.query(`SELECT 1 FROM ${FILE_REMOVAL} WHERE channel_recording_id = $1`, [r.id])) as unknown[])
        .length > 0;
    if (!exists) return false;
    await this.schedule(this.ds.manager, r, locations);
    await this.run(r.id);
    return true;
  }

  /**
   * One attempt at a pending removal; true when it is done (or was). Never throws: a failure is written down and
   * retried by the sweeper.
   */
  async run(channelRecordingId: string): Promise<boolean> {
    let row: RemovalRow | undefined;
    try {
      [row] = (await this.ds.query(
        `SELECT * FROM ${FILE_REMOVAL} WHERE channel_recording_id = $1 AND done_on IS NULL`,
        [channelRecordingId],
      )) as RemovalRow[];
      if (!row) return true;
      const work = this.paths.workDir(row.application_id, row.channel_id, row.channel_recording_id);
      await removeTree(work);
      await pruneEmptyDirs(path.dirname(work), this.paths.workRoot);
      await this.storage.remove(
        row.locations,
        this.paths.recordingPrefix(row.organization_id, row.application_id, row.channel_id, row.channel_recording_id),
      );
      // Done only when nothing was added meanwhile (a step that stored another file reopened it).
      await this.ds.query(
        `UPDATE ${FILE_REMOVAL} SET done_on = $3, last_error = NULL WHERE channel_recording_id = $1 AND revision = $2`,
        [row.channel_recording_id, row.revision, Date.now()],
      );
      this.metrics.fileRemovals.inc({ outcome: 'done' });
      if (row.attempts > 0)
        this.logger.event('info', 'the files of a deleted recording were removed after failed attempts', {
          channelRecordingId,
          attempts: row.attempts,
        });
      return true;
    } catch (e) {
      const error = (e as Error).message.slice(0, 2000);
      this.metrics.fileRemovals.inc({ outcome: 'failed' });
      const attempts = (row?.attempts ?? 0) + 1;
      const retryInMs = redeliveryDelayMs(attempts, RETRY_MAX_MS, RETRY_FIRST_MS);
      if (row) {
        await this.ds
          .query(
            `UPDATE ${FILE_REMOVAL} SET attempts = $3, last_error = $4, next_attempt_on = $5 WHERE channel_recording_id = $1 AND revision = $2`,
            [channelRecordingId, row.revision, attempts, error, Date.now() + retryInMs],
          )
          .catch(() => undefined); // the row stays due: the next sweep tries again
      }
      const stuck = attempts >= STUCK_AFTER;
      if (attempts === STUCK_AFTER) this.metrics.fileRemovals.inc({ outcome: 'stuck' });
      this.logger.event(
        stuck ? 'error' : 'warn',
        stuck
          ? 'the files of a deleted recording still cannot be removed; retrying'
          : 'removing the files of a deleted recording failed; it is retried',
        {
          channelRecordingId,
          attempts,
          retryInMs,
          error,
        },
      );
      return false;
    }
  }

  /** The sweeper's part: every removal whose next attempt is due; then forgets removals done long ago. */
  async runDue(): Promise<void> {
    const due = (await this.ds.query(
      `SELECT channel_recording_id FROM ${FILE_REMOVAL} WHERE done_on IS NULL AND next_attempt_on <= $1 ORDER BY next_attempt_on LIMIT 100`,
      [Date.now()],
    )) as Array<{
      channel_recording_id: string;
    }>;
    for (const r of due) await this.run(r.channel_recording_id);
    await this.ds.query(`DELETE FROM ${FILE_REMOVAL} WHERE done_on IS NOT NULL AND done_on < $1`, [
      Date.now() - KEEP_DONE_MS,
    ]);
  }
}
