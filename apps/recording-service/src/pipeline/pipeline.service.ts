import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import { JsonLogger, ReadinessService, SERVICE_CONFIG } from '@switchboard/service-kit';
import fs from 'node:fs/promises';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingPaths } from '../files/paths.js';
import { STORAGE, type StorageTarget } from '../files/storage.js';
import { EventBus } from '../lifecycle/event-bus.js';
import { LifecycleService } from '../lifecycle/lifecycle.service.js';
import { RecordingMetrics } from '../metrics.js';
import { sleep } from './files.js';
import { PipelineQueues } from './pipeline-queues.js';
import { IngestProcessor, MoveProcessor, MuxProcessor, SweepProcessor, type QueueProcessor } from './processors.js';

/** The sweeper's schedule is written again every 10 sweep intervals, at least this often apart. */
const RESCHEDULE_MIN_MS = 5000;

/**
 * Starts and stops the pipeline (README "Pipeline"): one worker per queue, the sweeper's schedule,
 * and the domain event consumer whose stopped channel recordings enter the pipeline.
 */
@Injectable()
export class PipelineService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly processors: QueueProcessor[];
  private stopping = false;
  private startup?: Promise<void>;
  private rescheduler?: NodeJS.Timeout;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    @Inject(STORAGE) private readonly storage: StorageTarget,
    private readonly queues: PipelineQueues,
    private readonly lifecycle: LifecycleService,
    private readonly bus: EventBus,
    private readonly logger: JsonLogger,
    private readonly metrics: RecordingMetrics,
    private readonly readiness: ReadinessService,
    ingest: IngestProcessor,
    mux: MuxProcessor,
    move: MoveProcessor,
    sweep: SweepProcessor,
  ) {
    this.processors = [ingest, mux, move, sweep];
  }

  async onApplicationBootstrap(): Promise<void> {
    await fs.mkdir(this.paths.workRoot, { recursive: true });
    if (this.storage.kind === 'local') await fs.mkdir(this.paths.storageRoot, { recursive: true });
    for (const processor of this.processors)
      this.queues.startWorker(processor.queue, processor.concurrency, (job, token) => processor.process(job, token));
    this.readiness.register('event-consumer', async () => {
      if (!this.bus.attached) throw new Error('not consuming the domain event stream');
    });
    // NATS or Redis may not be up yet: keep trying in the background (readiness says so meanwhile).
    this.startup = this.startInBackground();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.queues.interrupt();
    clearInterval(this.rescheduler);
    await this.startup;
    await this.bus.stop();
    await this.queues.close();
  }

  /** The sweeper's schedule, kept in Redis by BullMQ (one for the whole deployment). */
  private scheduleSweeps(): Promise<unknown> {
    return this.queues
      .queue('sweep')
      .upsertJobScheduler(
        'recording-sweeper',
        { every: this.config.recordingsSweepIntervalMs },
        { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: true } },
      );
  }

  private async startInBackground(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.scheduleSweeps();
        await this.queues
          .queue('sweep')
          .add(
            'sweep',
            {},
            { jobId: `sweep-startup-${process.pid}-${Date.now()}`, removeOnComplete: true, removeOnFail: true },
          );
        this.bus.start((event) => this.onEvent(event));
        this.keepSchedule();
        return;
      } catch (e) {
        if (attempt % 10 === 1)
          this.logger.event('warn', 'job scheduler not set up yet (Redis), retrying; events wait until it is', {
            attempt,
            error: (e as Error).message,
          });
        await sleep(Math.min(5000, 200 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /**
   * Writes the schedule again now and then: a Redis that lost its data (no persistence, a failover
   * to an empty replica) would otherwise stop every sweep until a replica restarts.
   */
  private keepSchedule(): void {
    this.rescheduler = setInterval(
      () => {
        this.scheduleSweeps().catch((e: unknown) =>
          this.logger.event('debug', 'sweeper schedule not written (Redis)', { error: (e as Error).message }),
        );
      },
      Math.max(RESCHEDULE_MIN_MS, 10 * this.config.recordingsSweepIntervalMs),
    );
    this.rescheduler.unref();
  }

  private async onEvent(event: DomainEvent): Promise<void> {
    try {
      const outcome = await this.lifecycle.apply(event);
      this.metrics.events.inc({ outcome: outcome.applied ? 'applied' : outcome.relevant ? 'duplicate' : 'ignored' });
      for (const id of outcome.stoppedChannelRecordings) await this.queues.enqueue('ingest', id);
    } catch (e) {
      this.metrics.events.inc({ outcome: 'failed' });
      throw e;
    }
  }
}
