import { Inject, Injectable } from '@nestjs/common';
import { RuntimeSubjects, type ConnectionInfo } from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { DataSource } from 'typeorm';
import type { RecordingServiceConfig } from '../config.js';
import { EventBus } from '../lifecycle/event-bus.js';
import { LifecycleService } from '../lifecycle/lifecycle.service.js';
import { RecordingMetrics } from '../metrics.js';
import {
  CHANNEL_RECORDING_TABLE,
  CONNECTION_END_TABLE,
  CONNECTION_RECORDING_TABLE,
} from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, ConnectionRecordingRow } from '../recordings/rows.js';
import { FileRemovals } from './file-removals.js';
import { PipelineQueues, STEP_OF_STAGE } from './pipeline-queues.js';
import { RecordingDeletion } from './recording-deletion.js';

/**
 * The periodic sweep (README "Sweeper"): expired recordings, pending file removals, orphaned
 * connection recordings, stalled pipeline steps, old processed event ids.
 */
@Injectable()
export class Sweeper {
  constructor(
    private readonly ds: DataSource,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly lifecycle: LifecycleService,
    private readonly bus: EventBus,
    private readonly nats: NatsClient,
    private readonly queues: PipelineQueues,
    private readonly deletion: RecordingDeletion,
    private readonly removals: FileRemovals,
    private readonly logger: JsonLogger,
    private readonly metrics: RecordingMetrics,
  ) {}

  async sweep(): Promise<void> {
    await this.expire();
    await this.removals.runDue();
    await this.closeOrphans();
    await this.resumeStalled();
    // Ids of events older than the stream keeps them cannot come back (nor can the connects the
    // ends remembered were kept for); with an unlimited or unreadable stream, none is forgotten.
    const horizon = await this.bus.redeliveryHorizonMs();
    if (horizon !== null) {
      await this.ds.query(`DELETE FROM recording.processed_event WHERE processed_on < $1`, [Date.now() - horizon]);
      await this.ds.query(`DELETE FROM ${CONNECTION_END_TABLE} WHERE created_on < $1`, [Date.now() - horizon]);
    }
  }

  private async expire(): Promise<void> {
    const rows = (await this.ds.query(
      `SELECT * FROM ${CHANNEL_RECORDING_TABLE} WHERE NOT deleted AND expiry_timestamp IS NOT NULL AND expiry_timestamp <= $1 AND stage IN ('ready', 'failed') ORDER BY expiry_timestamp LIMIT 100`,
      [Date.now()],
    )) as ChannelRecordingRow[];
    for (const r of rows) {
      if (!(await this.deletion.delete(r.id, null, true, true))) continue;
      this.logger.event('info', 'channel recording expired and deleted', { channelRecordingId: r.id });
      this.metrics.sweeps.inc({ what: 'expired' });
    }
  }

  private async closeOrphans(): Promise<void> {
    // Until the consumer caught up, silence may only mean unread events.
    const backlog = await this.bus.backlog().catch(() => Number.POSITIVE_INFINITY);
    if (backlog > 0) return;
    const cutoff = Date.now() - this.config.recordingsOrphanTimeoutMs;
    const rows = (await this.ds.query(
      `SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE stop_timestamp IS NULL AND last_seen_on < $1 ORDER BY last_seen_on LIMIT 100`,
      [cutoff],
    )) as ConnectionRecordingRow[];
    for (const c of rows) {
      const alive = await this.runtimeRecords(c);
      if (alive) {
        await this.lifecycle.touch(c.id);
        continue;
      }
      const outcome = await this.lifecycle.closeOrphan(
        c.id,
        `no event for ${Math.round(this.config.recordingsOrphanTimeoutMs / 1000)} s and the runtime does not record the connection`,
      );
      this.logger.event('warn', 'closed an orphaned connection recording', {
        connectionRecordingId: c.id,
        connectionId: c.connection_id,
      });
      this.metrics.sweeps.inc({ what: 'orphaned' });
      for (const id of outcome.stoppedChannelRecordings) await this.queues.enqueue('ingest', id);
    }
  }

  /** Whether the runtime still has the connection, recording. Unknown (runtime unreachable) counts as no. */
  private async runtimeRecords(c: ConnectionRecordingRow): Promise<boolean> {
    try {
      const info = (await this.nats.request(
        RuntimeSubjects.query,
        {
          scope: { organizationId: null, operator: true, principal: 'recording-service' },
          query: {
            kind: 'connection.get',
            applicationId: c.application_id,
            channelId: c.channel_id,
            userId: c.user_id,
            deviceId: c.device_id,
            clientId: c.client_id,
            connectionId: c.connection_id,
          },
        },
        { timeoutMs: 2000 },
      )) as ConnectionInfo | null;
      return Boolean(info && info.recording && info.state !== 'closed' && info.state !== 'failed');
    } catch {
      return false;
    }
  }

  private async resumeStalled(): Promise<void> {
    const cutoff = Date.now() - this.config.recordingsIngestTimeoutMs - 60000;
    const rows = (await this.ds.query(
      `SELECT id, stage FROM ${CHANNEL_RECORDING_TABLE} WHERE stage IN ('ingesting', 'muxing', 'moving') AND NOT deleted AND stage_changed_on < $1 LIMIT 100`,
      [cutoff],
    )) as Array<{
      id: string;
      stage: string;
    }>;
    for (const r of rows) {
      await this.queues.enqueue(STEP_OF_STAGE[r.stage]!, r.id);
      this.metrics.sweeps.inc({ what: 'resumed' });
    }
  }
}
