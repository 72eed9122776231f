import { Injectable } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import { JsonLogger } from '@switchboard/service-kit';
import { DataSource, type EntityManager } from 'typeorm';
import { Outbox } from '../lifecycle/outbox.js';
import {
  CHANNEL_RECORDING_TABLE,
  CONNECTION_RECORDING_TABLE,
  RecordingsStore,
} from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, ConnectionRecordingRow } from '../recordings/rows.js';
import { FileRemovals } from './file-removals.js';
import type { Step } from './pipeline-queues.js';
import { channelRecordingEvent } from './recording-events.js';

/** The reads and stage changes of channel recordings the pipeline's steps share. */
@Injectable()
export class RecordingStages {
  constructor(
    private readonly ds: DataSource,
    private readonly store: RecordingsStore,
    private readonly outbox: Outbox,
    private readonly removals: FileRemovals,
    private readonly logger: JsonLogger,
  ) {}

  async row(id: string): Promise<ChannelRecordingRow | undefined> {
    return (
      (await this.ds.query(`SELECT * FROM ${CHANNEL_RECORDING_TABLE} WHERE id = $1`, [id])) as ChannelRecordingRow[]
    )[0];
  }

  async children(id: string, db: DataSource | EntityManager = this.ds): Promise<ConnectionRecordingRow[]> {
    return (await db.query(
      `SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE channel_recording_id = $1 AND NOT deleted ORDER BY start_timestamp, id`,
      [id],
    )) as ConnectionRecordingRow[];
  }

  /**
   * Moves a channel recording to `stage` (with more columns); answers the row as it is now, or
   * undefined when the recording was deleted (a deleted recording is never changed by a step: a
   * deletion holding the row makes this wait and then find it deleted).
   */
  async setStage(
    id: string,
    stage: string,
    fields: Record<string, unknown> = {},
    db: DataSource | EntityManager = this.ds,
  ): Promise<ChannelRecordingRow | undefined> {
    const now = Date.now();
    const sets = ['stage = $2', 'stage_changed_on = $3', 'modified_on = $3'];
    const params: unknown[] = [id, stage, now];
    for (const [column, value] of Object.entries(fields)) {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    // TypeORM answers an UPDATE ... RETURNING with [rows, affected].
    const [rows] = (await db.query(
      `UPDATE ${CHANNEL_RECORDING_TABLE} SET ${sets.join(', ')} WHERE id = $1 AND NOT deleted RETURNING *`,
      params,
    )) as [ChannelRecordingRow[], number];
    return rows[0];
  }

  /**
   * A stage change and the events announcing it, in one transaction (the events go to the outbox,
   * so they are published if and only if the change committed); then relays them. False (nothing
   * changed, nothing announced) when the recording was deleted.
   */
  async setStageAnnounced(
    id: string,
    stage: string,
    fields: Record<string, unknown>,
    announce: (m: EntityManager, fresh: ChannelRecordingRow) => Promise<DomainEvent[]> | DomainEvent[],
    alsoInTransaction?: (m: EntityManager) => Promise<unknown>,
  ): Promise<boolean> {
    const changed = await this.ds.transaction(async (m) => {
      const fresh = await this.setStage(id, stage, fields, m);
      if (!fresh) return false;
      await alsoInTransaction?.(m);
      await this.outbox.add(m, await announce(m, fresh));
      return true;
    });
    if (changed) this.outbox.kick();
    return changed;
  }

  /** `channel.recording.mux.failed` / `move.failed` of a recording as it is now. */
  failedEvent(
    type: 'channel.recording.mux.failed' | 'channel.recording.move.failed',
    fresh: ChannelRecordingRow,
  ): DomainEvent {
    return channelRecordingEvent(
      type,
      fresh,
      this.store.channelUrls(fresh),
      Number(fresh.stage_changed_on),
      fresh.error,
    );
  }

  /**
   * A step found its recording deleted while it ran: it stops, and what it wrote or stored since
   * the deletion's removal goes too when the deletion removed the files (`FileRemovals.reopen`).
   */
  async deletedDuring(r: ChannelRecordingRow, step: Step, stored: string[] = []): Promise<void> {
    this.logger.event('info', `recording ${step} stopped: the recording was deleted`, { channelRecordingId: r.id });
    await this.removals.reopen(r, stored);
  }
}
