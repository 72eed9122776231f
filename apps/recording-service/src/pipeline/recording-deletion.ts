import { Injectable } from '@nestjs/common';
import { DomainError } from '@switchboard/contracts';
import { DataSource } from 'typeorm';
import { lockChannel } from '../lifecycle/lifecycle.service.js';
import { Outbox } from '../lifecycle/outbox.js';
import { channelRecordingChanges, connectionRecordingChanges, SWEEPER_ACTOR } from '../recordings/change-notices.js';
import { CHANNEL_RECORDING_TABLE, CONNECTION_RECORDING_TABLE } from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, ConnectionRecordingRow } from '../recordings/rows.js';
import { FileRemovals } from './file-removals.js';
import { channelRecordingEvent } from './recording-events.js';

const CHANNEL_FILE_RESET = `, ready = false, audio_ready = false, video_ready = false, file_path = NULL, audio_file_path = NULL, video_file_path = NULL,
             file_size = NULL, audio_file_size = NULL, video_file_size = NULL, move_pending = false, audio_move_pending = false, video_move_pending = false, mux_pending = false`;
const CONNECTION_FILE_RESET = `, audio_ready = false, video_ready = false, audio_file_path = NULL, video_file_path = NULL, audio_file_size = NULL, video_file_size = NULL,
             audio_move_pending = false, video_move_pending = false`;

/**
 * The deletion of a stopped channel recording and its connection recordings, by a caller or by the
 * sweeper's expiry; the README's "Delete" says what it writes and how its files are removed.
 */
@Injectable()
export class RecordingDeletion {
  constructor(
    private readonly ds: DataSource,
    private readonly outbox: Outbox,
    private readonly removals: FileRemovals,
  ) {}

  /**
   * Marks the recordings deleted, with their change records (naming `changedBy`), in one transaction;
   * `removeFiles` records the removal of every file there and tries it once committed. `expired`:
   * `channel.recording.expired` goes out with the deletion. False when it already was deleted.
   */
  async delete(
    id: string,
    actor: string | null,
    removeFiles: boolean,
    expired = false,
    changedBy: string = SWEEPER_ACTOR,
  ): Promise<boolean> {
    const now = Date.now();
    const done = await this.ds.transaction(async (m) => {
      const [peek] = (await m.query(`SELECT application_id, channel_id FROM ${CHANNEL_RECORDING_TABLE} WHERE id = $1`, [
        id,
      ])) as Array<{
        application_id: string;
        channel_id: string;
      }>;
      if (!peek) return null;
      await lockChannel(m, peek.application_id, peek.channel_id);
      const [r] = (await m.query(`SELECT * FROM ${CHANNEL_RECORDING_TABLE} WHERE id = $1 FOR UPDATE`, [
        id,
      ])) as ChannelRecordingRow[];
      if (!r || r.deleted) return null;
      if (r.stop_timestamp === null)
        throw new DomainError(
          'Conflict',
          'The channel recording is still recording; it can be deleted once it stopped.',
        );
      const fileReset = removeFiles ? CHANNEL_FILE_RESET : '';
      const [[fresh]] = (await m.query(
        `UPDATE ${CHANNEL_RECORDING_TABLE} SET deleted = true, deleted_on = $2, deleted_by = $3, modified_on = $2, modified_by = COALESCE($3, modified_by)${fileReset} WHERE id = $1 RETURNING *`,
        [id, now, actor],
      )) as [ChannelRecordingRow[], number];
      const childReset = removeFiles ? CONNECTION_FILE_RESET : '';
      const children = (await m.query(`SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE channel_recording_id = $1`, [
        id,
      ])) as ConnectionRecordingRow[];
      const deletedChildren = (await m.query(
        `UPDATE ${CONNECTION_RECORDING_TABLE} SET deleted = true, deleted_on = $2, deleted_by = $3, modified_on = $2${childReset} WHERE channel_recording_id = $1 AND NOT deleted RETURNING *`,
        [id, now, actor],
      )) as [ConnectionRecordingRow[], number];
      if (removeFiles) {
        const locations = [
          r.file_path,
          r.audio_file_path,
          r.video_file_path,
          ...children.flatMap((c) => [c.audio_file_path, c.video_file_path]),
        ].filter((l): l is string => Boolean(l));
        await this.removals.schedule(m, r, locations);
      }
      await this.outbox.addChanges(m, [
        ...channelRecordingChanges('Delete', r, fresh!, changedBy, now),
        ...connectionRecordingChanges(children, deletedChildren[0], changedBy, now),
      ]);
      if (expired)
        await this.outbox.add(m, [
          channelRecordingEvent(
            'channel.recording.expired',
            fresh!,
            { url: null, audioUrl: null, videoUrl: null },
            now,
          ),
        ]);
      return true;
    });
    if (!done) return false;
    this.outbox.kick();
    if (removeFiles) await this.removals.run(id);
    return true;
  }
}
