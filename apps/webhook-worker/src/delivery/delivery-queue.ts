import { Injectable, Logger } from '@nestjs/common';
import type { EventInfo, WebhookSource } from '@switchboard/contracts';
import { Queue, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { WebhookWorkerConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { InjectWebhookConfig } from '../tokens.js';

/** Attempts of a reliable webhook, in all (http-contract.md). */
export const RELIABLE_ATTEMPTS = 3;

/** The queue of one deployment (namespace): `<ns>-webhook-deliveries`. */
export function deliveryQueueName(namespace: string): string {
  return `${namespace}-webhook-deliveries`;
}

/** BullMQ key prefix: inside the deployment's Redis key prefix (`sb:bull:<queue>:...`). */
export function bullPrefix(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}bull`;
}

/** BullMQ connections: commands wait for a reconnection instead of failing (BullMQ requires it). */
export function bullConnection(url: string, name: string): Redis {
  const redis = new Redis(url, { connectionName: name, maxRetriesPerRequest: null, enableReadyCheck: true, retryStrategy: (n) => Math.min(50 * n, 1000) });
  redis.on('error', () => undefined);
  return redis;
}

/** Job payload: everything one attempt needs except the secret (read at delivery time, never stored in Redis). */
export interface DeliveryJobData {
  deliveryId: string;
  webhookId: string;
  source: WebhookSource;
  url: string;
  batch: boolean;
  reliable: boolean;
  organizationId: string;
  applicationId: string;
  channelId: string | null;
  events: EventInfo[];
  /** Ordering within (webhook, channel): the stream sequence of the first event; 0 when unknown (replays, recoveries). */
  order: number;
  /** `order` of the delivery queued just before this one with the same ordering key by the same replica, if recent; else 0. */
  prev: number;
  /** That delivery's id (its job id), to ask BullMQ whether it is still in progress. */
  prevDeliveryId: string | null;
  /** Attempts already logged for this delivery before this job (re-queued by the reconciler). */
  attemptOffset: number;
  replayOf: string | null;
  /** Queued again by the reconciler: the processor checks the delivery is still pending first. */
  recovered?: boolean;
}

/**
 * The ordering key of a delivery: its webhook and its channel; outside a channel, its client; else
 * the event itself (no order to keep).
 */
export function orderingKey(data: Pick<DeliveryJobData, 'webhookId' | 'channelId' | 'events'>): string {
  const first = data.events[0];
  const scope = data.channelId !== null ? `channel:${data.channelId}` : first?.client ? `client:${first.client.id}` : `event:${first?.id ?? ''}`;
  return `${data.webhookId}\u0000${scope}`;
}

/**
 * The BullMQ queue of deliveries. Job id = delivery id, so adding a delivery that is already queued
 * does nothing. Reliable: 3 attempts in all with exponential backoff (`WEBHOOK_RETRY_DELAY_MS`,
 * then twice that); otherwise 1 attempt. Completed jobs are removed at once (the delivery log in
 * PostgreSQL is the record); failed ones are kept a day for inspection.
 */
@Injectable()
export class DeliveryQueue {
  private readonly logger = new Logger('DeliveryQueue');
  readonly name: string;
  readonly prefix: string;
  readonly connection: Redis;
  readonly queue: Queue<DeliveryJobData>;

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    metrics: WebhookMetrics,
  ) {
    this.name = deliveryQueueName(config.natsNamespace);
    this.prefix = bullPrefix(config.redisKeyPrefix);
    this.connection = bullConnection(config.redisUrl, 'webhook-worker-queue');
    this.queue = new Queue<DeliveryJobData>(this.name, { connection: this.connection, prefix: this.prefix });
    this.queue.on('error', (e) => this.logger.warn(`queue: ${e.message}`));
    metrics.setQueueDepthSource(() => withTimeout(this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed'), 1000));
  }

  jobOptions(data: DeliveryJobData): JobsOptions {
    const total = data.reliable ? RELIABLE_ATTEMPTS : 1;
    return {
      jobId: data.deliveryId,
      attempts: Math.max(1, total - data.attemptOffset),
      backoff: { type: 'exponential', delay: this.config.retryDelayMs },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600, count: 10_000 },
    };
  }

  /** Adds the jobs in one round trip; jobs whose id is already queued are left as they are. */
  async addAll(jobs: readonly DeliveryJobData[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.addBulk(jobs.map((data) => ({ name: 'deliver', data, opts: this.jobOptions(data) })));
  }

  /**
   * Adds the jobs, trying again (with backoff) while Redis is unreachable, until `giveUp()` says
   * to stop (shutdown). The deliveries are already committed in PostgreSQL: if we give up, the
   * reconciler queues them later.
   */
  async addAllPersistently(jobs: readonly DeliveryJobData[], giveUp: () => boolean): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        // A timed-out add may still run later, and its jobs may be done and removed before this one
        // lands: jobs added again are marked `recovered`, so a delivery already made is skipped.
        await withTimeout(this.addAll(attempt === 1 ? jobs : jobs.map((j) => ({ ...j, recovered: true }))), 5000);
        return true;
      } catch (e) {
        if (giveUp()) return false;
        if (attempt === 1 || attempt % 20 === 0) this.logger.warn(`queueing ${jobs.length} deliveries failed (attempt ${attempt}), trying again: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, Math.min(100 * attempt, 1000)));
      }
    }
  }

  /** Whether the job of a delivery is still to be done or in progress (waiting, active, prioritized). */
  async inProgress(deliveryId: string): Promise<boolean> {
    const state = await withTimeout(this.queue.getJobState(deliveryId), 1000);
    return state === 'active' || state === 'waiting' || state === 'prioritized' || state === 'waiting-children';
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
