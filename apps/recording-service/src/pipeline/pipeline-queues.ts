import { Inject, Injectable } from '@nestjs/common';
import { bullConnection, bullPrefix, JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RecordingServiceConfig } from '../config.js';

/** A step of the pipeline; each has a queue of its own. */
export type Step = 'ingest' | 'mux' | 'move';
/** The pipeline's queues: one per step, plus the sweeper's. */
export type PipelineQueue = Step | 'sweep';

export interface StepJob {
  channelRecordingId: string;
}

/** What a worker runs for each job of its queue. */
export type JobProcessor = (job: Job, token?: string) => Promise<unknown>;

/** The step that works on a recording at each `stage`. */
export const STEP_OF_STAGE: Record<string, Step> = { ingesting: 'ingest', muxing: 'mux', moving: 'move' };
const ATTEMPTS: Record<Step, number> = { ingest: 3, mux: 2, move: 3 };

/**
 * The pipeline's BullMQ queues (`<ns>-recording-<step>`) and their workers, and the stop signal
 * that cuts off the steps in progress when the service stops.
 */
@Injectable()
export class PipelineQueues {
  private readonly queues = new Map<PipelineQueue, Queue>();
  private readonly workers: Worker[] = [];
  private queueConnection?: Redis;
  private workerConnection?: Redis;
  private readonly halt = new AbortController();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
  ) {}

  /** Aborted when the service stops: the ffmpeg runs and the ingest waits in progress end at once. */
  get stopSignal(): AbortSignal {
    return this.halt.signal;
  }

  private queueName(queue: PipelineQueue): string {
    return `${this.config.natsNamespace}-recording-${queue}`;
  }

  queue(name: PipelineQueue): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      this.queueConnection ??= bullConnection(this.config.redisUrl, 'recording-service-queue');
      queue = new Queue(this.queueName(name), {
        connection: this.queueConnection,
        prefix: bullPrefix(this.config.redisKeyPrefix),
      });
      queue.on('error', (e) => this.logger.event('warn', `queue ${name}: ${e.message}`));
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Queues a step of a channel recording (job id `<step>-<id>`: never queued twice). */
  async enqueue(step: Step, channelRecordingId: string): Promise<void> {
    await this.queue(step).add(step, { channelRecordingId } satisfies StepJob, {
      jobId: `${step}-${channelRecordingId}`,
      attempts: ATTEMPTS[step],
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  startWorker(queue: PipelineQueue, concurrency: number, processor: JobProcessor): void {
    this.workerConnection ??= bullConnection(this.config.redisUrl, 'recording-service-worker');
    const worker = new Worker(this.queueName(queue), processor, {
      connection: this.workerConnection,
      prefix: bullPrefix(this.config.redisKeyPrefix),
      concurrency,
      autorun: true,
    });
    worker.on('error', (e) => this.logger.event('warn', `worker ${queue}: ${e.message}`));
    worker.on('failed', (job, e) =>
      this.logger.event('warn', `job ${queue} ${job?.id ?? ''} failed (attempt ${job?.attemptsMade ?? '?'})`, {
        error: e.message,
      }),
    );
    this.workers.push(worker);
  }

  /** Cuts off the steps in progress; each goes back to its queue (StepRunner). */
  interrupt(): void {
    this.halt.abort();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close().catch(() => undefined)));
    await Promise.all([...this.queues.values()].map((queue) => queue.close().catch(() => undefined)));
    for (const connection of [this.workerConnection, this.queueConnection])
      await connection?.quit().catch(() => connection.disconnect());
  }
}
