import { Injectable } from '@nestjs/common';
import { DomainError, type CallerScope, type RecordingCommand } from '@switchboard/contracts';
import { Outbox } from '../lifecycle/outbox.js';
import { PipelineService } from '../pipeline/pipeline.service.js';
import { channelRecordingChanges } from './change-notices.js';
import { CR, RecordingsStore } from './recordings.store.js';
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
    private readonly pipeline: PipelineService,
    private readonly outbox: Outbox,
  ) {}

  async run(scope: CallerScope, command: RecordingCommand): Promise<null> {
    const row = await this.store.channelRow(scope, command);
    switch (command.kind) {
      case 'channelRecording.update': {
        const expiry = command.patch.expiryTimestamp;
        if (expiry === undefined) return null;
        const expiresAt = expiry === null ? null : Date.parse(expiry);
        // The date-time format admits what JavaScript cannot represent (a leap second, ...:60).
        if (expiresAt !== null && !Number.isFinite(expiresAt)) {
          const field = 'command.patch.expiryTimestamp';
          throw new DomainError('ValidationFailed', 'The channel recording patch is invalid.', [{ field, message: 'must be a date-time with seconds 00 to 59' }], field);
        }
        const now = Date.now();
        const noticed = await this.store.ds.transaction(async (m) => {
          const [before] = (await m.query(`SELECT * FROM ${CR} WHERE id = $1 FOR UPDATE`, [row.id])) as ChannelRecordingRow[];
          const [[after]] = (await m.query(`UPDATE ${CR} SET expiry_timestamp = $2, modified_on = $3, modified_by = $4 WHERE id = $1 RETURNING *`, [
            row.id,
            expiresAt,
            now,
            actorOf(scope),
          ])) as [ChannelRecordingRow[], number];
          if (!before || !after) return false;
          const notices = channelRecordingChanges('Update', before, after, scope.principal, now);
          await this.outbox.addChanges(m, notices);
          return notices.length > 0;
        });
        if (noticed) this.outbox.kick();
        return null;
      }
      case 'channelRecording.delete':
        await this.pipeline.deleteRecording(row.id, actorOf(scope), row.delete_files, false, scope.principal);
        return null;
    }
  }
}
