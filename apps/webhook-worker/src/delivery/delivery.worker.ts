import { Injectable, Logger } from '@nestjs/common';
import { bullConnection } from '@switchboard/service-kit';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { WebhookWorkerConfig } from '../config.js';
import { InjectWebhookConfig } from '../tokens.js';
import { DeliverWebhook } from './deliver-webhook.js';
import { DeliveryQueue, type DeliveryJobData } from './delivery-queue.js';

/**
 * The BullMQ worker of the delivery queue: thin, it hands each job to DeliverWebhook.
 * `WEBHOOK_CONCURRENCY` jobs at once; a job whose replica died is handed back after
 * `WEBHOOK_JOB_LOCK_MS` (stalled check at the same interval) and may stall 10 times before BullMQ
 * gives up on it (the reconciler then queues it again, it is still pending in PostgreSQL).
 */
@Injectable()
export class DeliveryWorker {
  private readonly logger = new Logger('DeliveryWorker');
  private worker: Worker<DeliveryJobData> | undefined;
  private connection: Redis | undefined;

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    private readonly queue: DeliveryQueue,
    private readonly deliver: DeliverWebhook,
  ) {}

  start(): void {
    if (this.worker) return;
    this.connection = bullConnection(this.config.redisUrl, 'webhook-worker-worker');
    this.worker = new Worker<DeliveryJobData>(this.queue.name, (job, token) => this.deliver.run(job, token), {
      connection: this.connection,
      prefix: this.queue.prefix,
      concurrency: this.config.concurrency,
      lockDuration: this.config.jobLockMs,
      stalledInterval: this.config.jobLockMs,
      maxStalledCount: 10,
      drainDelay: 5,
      removeOnComplete: { count: 0 },
      autorun: true,
    });
    this.worker.on('error', (e) => {
      // A job handed back (lost lock) and finished by its second run: the first run's own finish
      // finds the job gone. Expected after a Redis restart or a long pause; the log has the outcome.
      if (/^Missing (key|lock) for job/.test(e.message)) this.logger.debug(`worker: ${e.message}`);
      else this.logger.warn(`worker: ${e.message}`);
    });
    this.worker.on('failed', (job, e) => {
      if (job && e.name !== 'DelayedError') this.logger.debug(e.message);
    });
  }

  /**
   * Stops taking jobs and starting deliveries, and waits for the jobs in progress to finish their attempts in flight
   * and hand the rest back.
   */
  async stop(): Promise<void> {
    this.deliver.stopSending();
    await this.worker?.close().catch((e: unknown) => this.logger.warn(`closing the worker: ${(e as Error).message}`));
    this.worker = undefined;
    await this.connection?.quit().catch(() => this.connection?.disconnect());
    this.connection = undefined;
    this.deliver.sender.close();
  }
}
