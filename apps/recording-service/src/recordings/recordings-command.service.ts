import { Injectable } from '@nestjs/common';
import type { CallerScope, RecordingCommand } from '@switchboard/contracts';
import { Outbox } from '../lifecycle/outbox.js';
import { RecordingDeletion } from '../pipeline/recording-deletion.js';
import { channelRecordingChanges } from './change-notices.js';
import { CHANNEL_RECORDING_TABLE, RecordingsStore } from './recordings.store.js';
import type { ChannelRecordingRow } from './rows.js';
import { actorOf } from './sql.js';

/**
 * Answers `recording-service.v1.command`: expiry patch and delete. Each writes its change records
 * (change notices, relayed to management-api's change log) in the transaction of the change.
 */
@Injectable()
export class RecordingsCommandService {
  constructor(
    private readonly store: RecordingsStore,
    private readonly deletion: RecordingDeletion,
    private readonly outbox: Outbox,
  ) {}

  async run(scope: CallerScope, command: RecordingCommand): Promise<null> {
    const row = await this.store.channelRow(scope, command);
    switch (command.kind) {
      case 'channelRecording.update': {
        const expiry = command.patch.expiryTimestamp;
        if (expiry === undefined) return null;
        // The date-time format (contracts' isDateTime) admits only what Date.parse reads.
        const expiresAt = expiry === null ? null : Date.parse(expiry);
        const now = Date.now();
        const noticed = await this.store.ds.transaction(async (m) => {
          const [before] = (await m.query(`SELECT * FROM ${CHANNEL_RECORDING_TABLE} WHERE id = $1 FOR UPDATE`, [
            row.id,
          ])) as ChannelRecordingRow[];
          const [[after]] = (await m.query(
            `UPDATE ${CHANNEL_RECORDING_TABLE} SET expiry_timestamp = $2, modified_on = $3, modified_by = $4 WHERE id = $1 RETURNING *`,
            [row.id, expiresAt, now, actorOf(scope)],
          )) as [ChannelRecordingRow[], number];
          if (!before || !after) return false;
          const notices = channelRecordingChanges('Update', before, after, scope.principal, now);
          await this.outbox.addChanges(m, notices);
          return notices.length > 0;
        });
        if (noticed) this.outbox.kick();
        return null;
      }
      case 'channelRecording.delete':
        await this.deletion.delete(row.id, actorOf(scope), row.delete_files, false, scope.principal);
        return null;
    }
  }
}
