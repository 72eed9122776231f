import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `file_removal`: the files of a deleted (or expired) channel recording that are still to be
 * removed, written in the transaction of the deletion, so that no crash and no storage outage
 * between the commit and the removal leaves them in storage for good. One row per recording: the
 * stored locations named by its rows when it was deleted (the removal also takes its work
 * directory and everything under its key prefix in the storage target). The sweeper retries it
 * (`next_attempt_on`, growing with `attempts`) until it succeeds (`done_on`); a pipeline step that
 * finds its recording deleted after it stored more files opens it again (`revision` + 1: a removal
 * that read the row before marks it done only when nothing was added meanwhile).
 */
export class FileRemoval1765100000000 implements MigrationInterface {
  name = 'FileRemoval1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recording.file_removal (
      channel_recording_id uuid PRIMARY KEY,
      organization_id text NOT NULL,
      application_id text NOT NULL,
      channel_id text NOT NULL,
      locations text[] NOT NULL DEFAULT '{}',
      revision integer NOT NULL DEFAULT 0,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_on bigint NOT NULL,
      last_error text,
      created_on bigint NOT NULL,
      done_on bigint
    )`);
    await q.query(`CREATE INDEX file_removal_due ON recording.file_removal (next_attempt_on) WHERE done_on IS NULL`);
    await q.query(`CREATE INDEX file_removal_done ON recording.file_removal (done_on) WHERE done_on IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording.file_removal`);
  }
}
