import { Injectable } from '@nestjs/common';
import type { CallerScope, RecordingCommand } from '@switchboard/contracts';
import { PipelineService } from '../pipeline/pipeline.service.js';
import { CR, RecordingsStore } from './recordings.store.js';
import { actorOf } from './sql.js';

/** Answers `recording-service.v1.command`: expiry patch and delete. */
@Injectable()
export class RecordingsCommandService {
  constructor(
    private readonly store: RecordingsStore,
    private readonly pipeline: PipelineService,
  ) {}

  async run(scope: CallerScope, command: RecordingCommand): Promise<null> {
    const row = await this.store.channelRow(scope, command);
    switch (command.kind) {
      case 'channelRecording.update': {
        const expiry = command.patch.expiryTimestamp;
        if (expiry === undefined) return null;
        await this.store.ds.query(`UPDATE ${CR} SET expiry_timestamp = $2, modified_on = $3, modified_by = $4 WHERE id = $1`, [
          row.id,
          expiry === null ? null : Date.parse(expiry),
          Date.now(),
          actorOf(scope),
        ]);
        return null;
      }
      case 'channelRecording.delete':
        await this.pipeline.deleteRecording(row.id, actorOf(scope), row.delete_files);
        return null;
    }
  }
}
