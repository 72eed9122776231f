import { Injectable, Logger } from '@nestjs/common';
import type { EventInfo, WebhookSource } from '@switchboard/contracts';
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { bullConnection, bullPrefix } from '@switchboard/service-kit';
import type { WebhookWorkerConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { jobIdFor, orderingKey } from '../intake/delivery-planner.js';
import { InjectWebhookConfig } from '../tokens.js';

export { orderingKey };

/** Deliveries added per `addBulk` call, about (see DeliveryQueue.addAll). */
const ADD_SLICE = 500;

/** Attempts of a reliable webhook, in all (http-contract.md). */
export const RELIABLE_ATTEMPTS = 3;

/** The queue of one deployment (namespace): `<ns>-webhook-deliveries`. */
export function deliveryQueueName(namespace: string): string {
  return `${namespace}-webhook-deliveries`;
}

/** One delivery inside a job. */
export interface DeliveryItem {
  deliveryId: string;
  events: EventInfo[];
  /**
   * Ordering within (webhook, channel): the stream sequence of the first event; 0 when unknown (replays, recoveries).
   */
  order: number;
  /** Attempts already logged for this delivery before this job (a retry handed off, re-queued by the reconciler). */
  attemptOffset: number;
  replayOf: string | null;
  /** Its channel, when not the job's `channelId` (a job carries deliveries of several channels); absent: the job's. */
  channelId?: string | null;
  /**
   * On the first delivery of its ordering key in the job: the `order` of the delivery queued just
   * before it on that key by the same replica, if recent (else 0 or absent), and that delivery's job,
   * to ask BullMQ whether it is still in progress.
   */
  prev?: number;
  prevJobId?: string | null;
}

/**
 * Job payload: everything the attempts need except the secret (read at delivery time, never
 * stored in Redis). A job carries the deliveries of one webhook (one target) queued by one intake
 * group, at most `WEBHOOK_DELIVERIES_PER_JOB`: one BullMQ round trip for all of them. Its
 * deliveries form lanes, one per ordering key (webhook + channel, see orderingKey), each in stream
 * order and consecutive in `deliveries`; the lanes are sent concurrently, the deliveries of a lane
 * one after the other (see lanesOf and DeliverWebhook).
 */
export interface DeliveryJobData {
  webhookId: string;
  source: WebhookSource;
  url: string;
  batch: boolean;
  reliable: boolean;
  organizationId: string;
  applicationId: string;
  /** The channel of its deliveries that do not name their own (the first delivery's). */
  channelId: string | null;
  deliveries: DeliveryItem[];
  /** Jobs queued before lanes: the predecessor of the (single) lane, as `DeliveryItem.prev` / `prevJobId`. */
  prev?: number;
  prevJobId?: string | null;
  /**
   * Queued again (reconciler, retried add, retry handed off): the processor checks the deliveries are still pending
   * first.
   */
  recovered?: boolean;
}

/** The deliveries of one ordering key in a job. */
export interface Lane {
  key: string;
  channelId: string | null;
  /** The `order` of its first delivery. */
  order: number;
  prev: number;
  prevJobId: string | null;
  items: DeliveryItem[];
}

/** The channel of a delivery of the job. */
export function channelOfItem(data: Pick<DeliveryJobData, 'channelId'>, item: DeliveryItem): string | null {
  return item.channelId !== undefined ? item.channelId : data.channelId;
}

/** The lanes of a job (in the order of their first delivery): its deliveries grouped by ordering key. */
export function lanesOf(data: DeliveryJobData): Lane[] {
  const lanes = new Map<string, Lane>();
  for (const item of data.deliveries) {
    const channelId = channelOfItem(data, item);
    const key = orderingKey({ webhookId: data.webhookId, channelId, events: item.events });
    const lane = lanes.get(key);
    if (lane) {
      lane.items.push(item);
      continue;
    }
    const first = lanes.size === 0;
    lanes.set(key, {
      key,
      channelId,
      order: item.order,
      prev: item.prev ?? (first ? (data.prev ?? 0) : 0),
      prevJobId: item.prevJobId ?? (first ? (data.prevJobId ?? null) : null),
      items: [item],
    });
  }
  return [...lanes.values()];
}

/** The job id: the delivery id for a job of one delivery, else a name-based id of its deliveries. */
export function jobIdOf(data: Pick<DeliveryJobData, 'deliveries'>): string {
  return jobIdFor(data.deliveries.map((d) => d.deliveryId));
}

/**
 * The BullMQ queue of deliveries. Job id = delivery id (or, for a job of several deliveries, a
 * name-based id of them, also kept in the delivery rows), so adding a job that is already queued
 * does nothing. Completed jobs are removed at once (the delivery log in PostgreSQL is the record);
 * failed ones are kept a day for inspection.
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
    metrics.setQueueDepthSource(() =>
      withTimeout(this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed'), 1000),
    );
  }

  /**
   * A job of one delivery is retried by BullMQ (reliable: up to 3 attempts in all, counting those
   * made before; exponential backoff continuing from there). A job of several deliveries runs once:
   * a delivery of it to be retried goes on in a job of its own (see DeliverWebhook).
   */
  jobOptions(data: DeliveryJobData, delayMs = 0): JobsOptions {
    const single = data.deliveries.length === 1;
    const offset = single ? data.deliveries[0]!.attemptOffset : 0;
    const total = single && data.reliable ? RELIABLE_ATTEMPTS : 1;
    return {
      jobId: jobIdOf(data),
      attempts: Math.max(1, total - offset),
      backoff: { type: 'exponential', delay: this.config.retryDelayMs * 2 ** offset },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600, count: 10_000 },
      ...(delayMs > 0 ? { delay: delayMs } : {}),
    };
  }

  /** Backoff before attempt `attempt + 1` of a reliable delivery (`WEBHOOK_RETRY_DELAY_MS` times 2^(attempt-1)). */
  retryDelay(attempt: number): number {
    return this.config.retryDelayMs * 2 ** Math.max(0, attempt - 1);
  }

  /**
   * Adds the jobs, in order; jobs whose id is already queued are left as they are. One round trip
   * per slice of about ADD_SLICE deliveries: BullMQ serializes the jobs of an `addBulk` in one
   * synchronous step, which for a whole intake group (payloads included) held the event loop for
   * tens of ms.
   */
  async addAll(jobs: readonly DeliveryJobData[], delayMs = 0): Promise<void> {
    let start = 0;
    while (start < jobs.length) {
      let end = start;
      let deliveries = 0;
      while (end < jobs.length && (end === start || deliveries + jobs[end]!.deliveries.length <= ADD_SLICE))
        deliveries += jobs[end++]!.deliveries.length;
      // A single job goes without `addBulk`, whose ioredis pipeline copies every script BullMQ
      // defines onto itself when it is made (~35 µs): at 1,000 events/s most intake groups make one job.
      if (end - start === 1) await this.queue.add('deliver', jobs[start]!, this.jobOptions(jobs[start]!, delayMs));
      else
        await this.queue.addBulk(
          jobs.slice(start, end).map((data) => ({ name: 'deliver', data, opts: this.jobOptions(data, delayMs) })),
        );
      start = end;
    }
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
        if (attempt === 1 || attempt % 20 === 0)
          this.logger.warn(
            `queueing ${jobs.length} deliveries failed (attempt ${attempt}), trying again: ${(e as Error).message}`,
          );
        await new Promise((r) => setTimeout(r, Math.min(100 * attempt, 1000)));
      }
    }
  }

  /** Whether a job is still to be done or in progress (waiting, active, prioritized). */
  async inProgress(jobId: string): Promise<boolean> {
    const state = await withTimeout(this.queue.getJobState(jobId), 1000);
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
