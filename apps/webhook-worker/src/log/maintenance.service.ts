import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { WebhookWorkerConfig } from '../config.js';
import { DeliveryQueue, withTimeout } from '../delivery/delivery-queue.js';
import { InjectWebhookConfig } from '../tokens.js';
import { DeliveryRepository, type StoredDelivery } from './delivery.repository.js';

const PAGE = 500;
/** BullMQ job states in which the job is still going to run (or running). */
const live = (state: string) =>
  state === 'waiting' ||
  state === 'active' ||
  state === 'delayed' ||
  state === 'prioritized' ||
  state === 'waiting-children';
const DAY_MS = 24 * 3600 * 1000;

/**
 * Periodic work done by one replica at a time (a PostgreSQL advisory lock per task, so it does not
 * depend on Redis, which the reconciler must outlive):
 * - reconcile (every `WEBHOOK_RECONCILE_INTERVAL_MS`): pending deliveries older than
 *   `WEBHOOK_RECONCILE_AFTER_MS` that no BullMQ job will run are queued again, each in a job of its
 *   own, marked `recovered`, continuing their attempt count; one page of them per run (README).
 * - prune (every `WEBHOOK_PRUNE_INTERVAL_MS`): deliveries, their attempts and processed event ids
 *   older than `WEBHOOK_LOG_RETENTION_DAYS`.
 */
@Injectable()
export class MaintenanceService {
  private readonly logger = new Logger('Maintenance');
  private timers: NodeJS.Timeout[] = [];
  private running = new Set<Promise<unknown>>();
  private cursor: { createdOn: number; id: string } | null = null;
  private stopped = false;

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    private readonly ds: DataSource,
    private readonly repository: DeliveryRepository,
    private readonly queue: DeliveryQueue,
  ) {}

  start(): void {
    this.stopped = false;
    this.every(this.config.reconcileIntervalMs, () => this.reconcileOnce());
    this.every(this.config.pruneIntervalMs, () => this.pruneOnce());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled(this.running);
  }

  private every(ms: number, task: () => Promise<unknown>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || this.stopped) return;
      busy = true;
      const p = task()
        .catch((e: unknown) => this.logger.warn(`maintenance task failed: ${(e as Error).message}`))
        .finally(() => {
          busy = false;
          this.running.delete(p);
        });
      this.running.add(p);
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Runs `task` if this replica gets the advisory lock `name`; undefined when another holds it. */
  private async exclusively<T>(name: string, task: () => Promise<T>): Promise<T | undefined> {
    const qr = this.ds.createQueryRunner();
    await qr.connect();
    const key = `webhook-worker:${this.config.natsNamespace}:${name}`;
    try {
      const [row] = (await qr.query(`SELECT pg_try_advisory_lock(hashtext($1)) AS locked`, [key])) as Array<{
        locked: boolean;
      }>;
      if (!row?.locked) return undefined;
      try {
        return await task();
      } finally {
        await qr.query(`SELECT pg_advisory_unlock(hashtext($1))`, [key]).catch(() => undefined);
      }
    } finally {
      await qr.release();
    }
  }

  /** One reconcile page; resolves to the number of deliveries queued again. */
  async reconcileOnce(): Promise<number> {
    return (
      (await this.exclusively('reconcile', async () => {
        const rows = await this.repository.pending(Date.now() - this.config.reconcileAfterMs, this.cursor, PAGE);
        const last = rows.at(-1);
        this.cursor = rows.length === PAGE && last ? { createdOn: last.createdOn, id: last.id } : null;
        if (rows.length === 0) return 0;
        // A delivery is in the hands of BullMQ while its own job (a retry, a recovery, a job of one)
        // or the job of several it was queued in is waiting, delayed or active.
        const states = await Promise.all(rows.map((r) => this.jobStates(r)));
        const suspects = rows.filter((_, i) => !states[i]!.some(live));
        if (suspects.length === 0) return 0;
        // A job finishes (and is removed) after its delivery left `pending`: read the state again,
        // so a delivery that finished between the two reads is not queued again.
        const pending = await this.repository.stillPending(suspects.map((d) => d.id));
        const lost: StoredDelivery[] = suspects.filter((d) => pending.has(d.id));
        for (const d of lost) {
          if (states[rows.indexOf(d)]![0] === 'failed') await this.queue.queue.remove(d.id).catch(() => undefined);
        }
        if (lost.length === 0) return 0;
        await this.queue.addAll(
          lost.map((d) => ({
            webhookId: d.webhookId,
            source: d.webhookSource,
            url: d.url,
            batch: d.batch,
            reliable: d.reliable,
            organizationId: d.organizationId,
            applicationId: d.applicationId,
            channelId: d.channelId,
            deliveries: [
              { deliveryId: d.id, events: d.events, order: 0, attemptOffset: d.attempts, replayOf: d.replayOf },
            ],
            recovered: true,
          })),
        );
        this.logger.warn(`queued ${lost.length} pending deliveries again (their jobs were lost)`);
        return lost.length;
      })) ?? 0
    );
  }

  /** BullMQ states of the delivery's own job, then of the job of several it was queued in (if any). */
  private jobStates(d: StoredDelivery): Promise<string[]> {
    const ids = d.jobId && d.jobId !== d.id ? [d.id, d.jobId] : [d.id];
    return Promise.all(ids.map((id) => withTimeout(this.queue.queue.getJobState(id), 5000)));
  }

  async pruneOnce(): Promise<{ deliveries: number; events: number } | undefined> {
    return this.exclusively('prune', async () => {
      const pruned = await this.repository.prune(Date.now() - this.config.logRetentionDays * DAY_MS);
      if (pruned.deliveries + pruned.events > 0)
        this.logger.log(`pruned ${pruned.deliveries} deliveries and ${pruned.events} processed event ids`);
      return pruned;
    });
  }
}
