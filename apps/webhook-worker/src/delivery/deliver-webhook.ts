import { Injectable, Logger } from '@nestjs/common';
import type { EventInfo } from '@switchboard/contracts';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { WebhookWorkerConfig } from '../config.js';
import { DeliveryLogWriter } from '../log/delivery-log.writer.js';
import { DeliveryRepository, type AttemptRow } from '../log/delivery.repository.js';
import { WebhookResolver } from '../matching/webhook-resolver.js';
import { WebhookMetrics, type AttemptOutcome } from '../metrics/webhook-metrics.js';
import { InjectWebhookConfig } from '../tokens.js';
import {
  DeliveryQueue,
  RELIABLE_ATTEMPTS,
  channelOfItem,
  jobIdOf,
  lanesOf,
  orderingKey,
  type DeliveryItem,
  type DeliveryJobData,
} from './delivery-queue.js';
import { HttpSender, type SendOutcome } from './http-sender.js';
import { KeySequencer } from './key-sequencer.js';
import { Permits } from './permits.js';
import { signatureHeaders } from './signatures.js';
import { TargetGuard } from './ssrf-guard.js';

export { orderingKey };

export type DeliveryResult = 'delivered' | 'skipped';

/** The body of a delivery: one EventInfo, or `{ batch: [...] }` for a batch webhook. */
export function deliveryBody(data: { batch: boolean; events: readonly EventInfo[] }): string {
  return JSON.stringify(data.batch ? { batch: data.events } : data.events[0]);
}

/** Whether a failed attempt may be retried: network errors, timeouts and 5xx answers. */
export function retryable(outcome: SendOutcome): boolean {
  if (outcome.kind === 'network-error' || outcome.kind === 'timeout') return true;
  return outcome.kind === 'response' && outcome.statusCode >= 500 && outcome.statusCode <= 599;
}

function succeeded(outcome: SendOutcome): boolean {
  return outcome.kind === 'response' && outcome.statusCode >= 200 && outcome.statusCode <= 299;
}

function outcomeLabel(outcome: SendOutcome): AttemptOutcome {
  switch (outcome.kind) {
    case 'response':
      return succeeded(outcome) ? 'success' : 'http_error';
    case 'network-error':
      return 'network_error';
    case 'timeout':
      return 'timeout';
    case 'refused':
      return 'refused';
  }
}

/** How long a job waits when its application's secret cannot be read (management-api down, no configuration kept). */
const SECRET_RETRY_MS = 2000;

/**
 * Deliveries this process finished recently (delivery id), remembered from the answer on, before their log is
 * committed.
 */
const SETTLED_MEMORY = 20_000;

/** One attempt made, its log row on its way to PostgreSQL. */
interface Sent {
  item: DeliveryItem;
  outcome: SendOutcome;
  attempt: number;
  again: boolean;
  attemptedOn: number;
  logged: Promise<void>;
}

/**
 * The attempts of one delivery job (the use case behind the BullMQ processor; README "Delivering a
 * job"): lanes of one ordering key run in stream order (KeySequencer); a job that ran before first
 * checks its deliveries are still pending; each attempt is logged while the next is sent; a
 * retryable failure of a reliable webhook is retried with backoff (a job of several hands it to a
 * job of its own); on stop, the deliveries not attempted go back to the queue (handBack).
 */
@Injectable()
export class DeliverWebhook {
  private readonly logger = new Logger('DeliverWebhook');
  private readonly sequencer: KeySequencer;
  private readonly settled = new Set<string>();
  private readonly settledOrder = Array.from<string | undefined>({ length: SETTLED_MEMORY });
  private settledNext = 0;
  /**
   * Deliveries sent and not yet logged, at most `WEBHOOK_CONCURRENCY`: a job of several goes on
   * sending while the previous attempts are being logged, and those are what a crash makes the
   * next run send again; this keeps that number where it was with one delivery per job. When every
   * place is taken, the log writer is told (`expedite`): under a burst, rows held back for its
   * interval would stall the deliveries waiting for a place.
   */
  private readonly unlogged: Permits;
  /**
   * Set when the replica stops: no delivery is started any more, the rest of each job is handed back (see handBack).
   */
  private stopping = false;
  readonly sender: HttpSender;

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    private readonly resolver: WebhookResolver,
    private readonly repository: DeliveryRepository,
    private readonly log: DeliveryLogWriter,
    private readonly metrics: WebhookMetrics,
    private readonly queue: DeliveryQueue,
  ) {
    this.sequencer = new KeySequencer({ maxWaitMs: config.timeoutMs + 2000 });
    this.unlogged = new Permits(config.concurrency);
    const guard = new TargetGuard({ allowPrivate: config.allowPrivateTargets, allowLoopback: config.allowLoopback });
    this.sender = new HttpSender(guard, { maxSocketsPerOrigin: config.maxSocketsPerOrigin });
  }

  /**
   * The replica stops: the attempts in flight finish and are logged, no other delivery starts, and
   * each job hands the deliveries it has not attempted back to the queue (see handBack), so a
   * stop takes about one attempt, not every delivery of the jobs in progress.
   */
  stopSending(): void {
    this.stopping = true;
  }

  async run(job: Job<DeliveryJobData>, token: string | undefined): Promise<DeliveryResult> {
    const started = performance.now();
    try {
      return await this.process(job, token);
    } finally {
      this.metrics.jobDuration.observe((performance.now() - started) / 1000);
    }
  }

  private async process(job: Job<DeliveryJobData>, token: string | undefined): Promise<DeliveryResult> {
    const data = job.data;
    // The lanes take their places on their keys first, and wait there for what the job still has
    // to read (its deliveries' state, when it ran before; the secret): a job held up by a read (the
    // secret's lookup waiting for management-api after a NATS outage) must not let a later job of the
    // same channel, which may name no predecessor (see EventIntake's PREDECESSOR_MEMORY_MS), go first.
    const ready = this.toSend(job).then(async (todo) => ({
      todo,
      secret: todo.size === 0 ? null : await this.secretFor(job, token),
    }));
    // Awaited by the lanes when their turn comes; handled here so a failure meanwhile is not unhandled.
    ready.catch(() => undefined);
    const outcomes = await Promise.allSettled(
      lanesOf(data).map((lane) =>
        this.sequencer.run(
          lane.key,
          lane.order,
          lane.prev,
          async () => {
            const { todo, secret } = await ready;
            return todo.size === 0 ? [] : this.sendAll(job, secret, lane.items, todo);
          },
          // Stopping: a lane waiting for another replica's job starts at once (and sends nothing).
          lane.prevJobId
            ? () => (this.stopping ? Promise.resolve(false) : this.queue.inProgress(lane.prevJobId!))
            : undefined,
        ),
      ),
    );
    const sent: Sent[] = [];
    for (const o of outcomes) {
      if (o.status === 'rejected') throw o.reason;
      sent.push(...o.value);
    }
    const { todo } = await ready;
    if (todo.size === 0) return 'skipped';
    const attempted = new Set(sent.map((s) => s.item.deliveryId));
    const unsent = data.deliveries
      .filter((d) => todo.has(d.deliveryId) && !attempted.has(d.deliveryId) && !this.settled.has(d.deliveryId))
      .map((d) => ({ ...d, attemptOffset: todo.get(d.deliveryId)! - 1 }));
    if (unsent.length > 0) return this.handBack(job, token, sent, unsent);
    if (sent.length === 0) return 'skipped';
    return this.finish(job, sent);
  }

  /**
   * Stopping with deliveries of the job not attempted (`unsent`, their attempt counts so far in
   * `attemptOffset`): the attempts made are finished as usual (see settle), then what is left goes
   * back to the queue at once, for any replica, without using up an attempt: the job itself, keeping
   * only the deliveries not attempted and marked `recovered` (its next run checks them in
   * PostgreSQL first; its id stays, so the delivery rows' `job_id` still finds it), or, when a job of
   * several has one left, a job of its own for it (so that it keeps the retries of a job of one).
   */
  private async handBack(
    job: Job<DeliveryJobData>,
    token: string | undefined,
    sent: readonly Sent[],
    unsent: DeliveryItem[],
  ): Promise<DeliveryResult> {
    const data = job.data;
    const id = job.id ?? jobIdOf(data);
    if (sent.length > 0) await this.settle(data, sent);
    this.logger.log(`stopping: ${unsent.length} deliveries of job ${id} handed back to the queue`);
    if (unsent.length === 1 && data.deliveries.length > 1) {
      await this.queue.addAll([jobOfOne(data, unsent[0]!, unsent[0]!.attemptOffset)]);
      return 'delivered';
    }
    await job.updateData({ ...data, deliveries: unsent, recovered: true });
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }

  private remember(deliveryId: string): void {
    if (this.settled.has(deliveryId)) return;
    // The oldest goes (a ring of ids: taking the first value of a Set that keeps losing its first
    // entries walks over their tombstones every time).
    const oldest = this.settledOrder[this.settledNext];
    if (oldest !== undefined) this.settled.delete(oldest);
    this.settledOrder[this.settledNext] = deliveryId;
    this.settledNext = (this.settledNext + 1) % SETTLED_MEMORY;
    this.settled.add(deliveryId);
  }

  /** The deliveries of the job still to send (delivery id), each with the number of its attempt. */
  private async toSend(job: Job<DeliveryJobData>): Promise<Map<string, number>> {
    const data = job.data;
    const items = data.deliveries.filter((d) => !this.settled.has(d.deliveryId));
    const todo = new Map<string, number>();
    if (items.length === 0) return todo;
    const ranBefore = job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0 || data.recovered === true;
    const logged = ranBefore ? await this.repository.pendingAttempts(items.map((d) => d.deliveryId)) : null;
    for (const item of items) {
      if (logged && !logged.has(item.deliveryId)) {
        this.logger.debug(`delivery ${item.deliveryId} is no longer pending: skipped`);
        continue;
      }
      todo.set(item.deliveryId, Math.max(item.attemptOffset + job.attemptsMade, logged?.get(item.deliveryId) ?? 0) + 1);
    }
    return todo;
  }

  /**
   * The application's secret (null: the application is unknown); when it cannot be had, the job waits without using up
   * an attempt.
   */
  private async secretFor(job: Job<DeliveryJobData>, token: string | undefined): Promise<string | null> {
    const data = job.data;
    try {
      return (await this.resolver.resolve(data.applicationId, data.channelId))?.sharedSecret ?? null;
    } catch (e) {
      this.logger.warn(
        `job ${job.id ?? jobIdOf(data)} waits: the secret of ${data.applicationId} is unavailable (${(e as Error).message})`,
      );
      await job.moveToDelayed(Date.now() + SECRET_RETRY_MS, token);
      throw new DelayedError();
    }
  }

  /** The deliveries of one lane still to send (in `todo`), one after the other. */
  private async sendAll(
    job: Job<DeliveryJobData>,
    secret: string | null,
    lane: readonly DeliveryItem[],
    todo: ReadonlyMap<string, number>,
  ): Promise<Sent[]> {
    const data = job.data;
    // A job of one delivery retries through BullMQ within its own attempts; a job of several hands
    // retries off to new jobs, up to the contract's 3 attempts.
    const single = data.deliveries.length === 1;
    const limit = single
      ? Math.min(data.deliveries[0]!.attemptOffset + (job.opts.attempts ?? 1), RELIABLE_ATTEMPTS)
      : RELIABLE_ATTEMPTS;
    const out: Sent[] = [];
    for (const item of lane) {
      const attempt = todo.get(item.deliveryId);
      // Finished meanwhile (by a run of the job before this one, still in progress when this one started).
      if (attempt === undefined || this.settled.has(item.deliveryId)) continue;
      if (this.stopping) break;
      // Every place taken: the log writer's rows are what this delivery waits for, write them now.
      if (this.unlogged.exhausted) this.log.expedite();
      await this.unlogged.acquire();
      if (this.stopping) {
        this.unlogged.release();
        break;
      }
      let sent: Sent;
      try {
        sent = await this.attempt(data, secret, item, attempt, limit);
      } catch (e) {
        this.unlogged.release();
        throw e;
      }
      // Logged while the next delivery is sent; the job waits for every row before it finishes.
      sent.logged = this.log.record(attemptRow(sent)).finally(() => this.unlogged.release());
      out.push(sent);
    }
    return out;
  }

  /** One attempt of one delivery (its log row not written yet). */
  private async attempt(
    data: DeliveryJobData,
    secret: string | null,
    item: DeliveryItem,
    attempt: number,
    limit: number,
  ): Promise<Sent> {
    const attemptedOn = Date.now();
    let outcome: SendOutcome;
    if (secret === null) {
      outcome = { kind: 'refused', error: `application ${data.applicationId} is unknown`, durationMs: 0 };
    } else {
      const body = deliveryBody({ batch: data.batch, events: item.events });
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Switchboard-Webhooks/1.0',
        ...signatureHeaders(secret, item.deliveryId, Math.floor(attemptedOn / 1000), body),
      };
      outcome = await this.sender.send({ url: data.url, body, headers, timeoutMs: this.config.timeoutMs });
    }
    const again = !succeeded(outcome) && data.reliable && retryable(outcome) && attempt < limit;
    if (!again) this.remember(item.deliveryId);
    return { item, outcome, attempt, again, attemptedOn, logged: Promise.resolve() };
  }

  private async finish(job: Job<DeliveryJobData>, sent: readonly Sent[]): Promise<DeliveryResult> {
    const data = job.data;
    if (data.deliveries.length > 1) {
      await this.settle(data, sent);
      return 'delivered';
    }
    await this.logged(data, sent);
    const s = sent[0]!;
    if (succeeded(s.outcome)) return 'delivered';
    const message = failureMessage(data, s);
    if (s.again) throw new Error(message);
    throw new UnrecoverableError(message);
  }

  /**
   * The job finishes only once its attempts are logged (DeliveryLogWriter retries until
   * PostgreSQL takes them): a delivery whose job is done is never pending in PostgreSQL unless a
   * retry job holds it, so the reconciler cannot send it again, and a second run of this job (lock
   * lost, Redis restarted) finds it finished, in `settled` or in PostgreSQL. Then the attempts are
   * counted.
   */
  private async logged(data: DeliveryJobData, sent: readonly Sent[]): Promise<void> {
    const logStarted = performance.now();
    await Promise.all(sent.map((s) => s.logged));
    this.metrics.logWrite.observe((performance.now() - logStarted) / 1000);
    for (const s of sent) this.count(data, s);
  }

  /**
   * The attempts of a job of several: logged and counted, and those to retry handed to jobs of their own, before the
   * job completes (a crash in between runs it again, and it finds them still pending).
   */
  private async settle(data: DeliveryJobData, sent: readonly Sent[]): Promise<void> {
    await this.logged(data, sent);
    for (const s of sent) if (!succeeded(s.outcome)) this.logger.debug(failureMessage(data, s));
    const byAttempt = new Map<number, Sent[]>();
    for (const s of sent.filter((x) => x.again)) byAttempt.set(s.attempt, [...(byAttempt.get(s.attempt) ?? []), s]);
    for (const [attempt, group] of byAttempt) {
      await this.queue.addAll(
        group.map((s) => jobOfOne(data, s.item, s.attempt)),
        this.queue.retryDelay(attempt),
      );
    }
  }

  private count(data: DeliveryJobData, s: Sent): void {
    const source = data.source;
    this.metrics.attempts.inc({ source, outcome: outcomeLabel(s.outcome) });
    this.metrics.attemptDuration.observe({ source }, s.outcome.durationMs / 1000);
    if (s.attempt > 1) this.metrics.retries.inc({ source });
    if (!s.again) this.metrics.deliveries.inc({ source, result: succeeded(s.outcome) ? 'succeeded' : 'failed' });
    if (succeeded(s.outcome)) {
      const answeredAt = s.attemptedOn + s.outcome.durationMs;
      for (const e of s.item.events) this.metrics.eventToDelivery.observe(Math.max(0, answeredAt - e.timestamp) / 1000);
    }
  }
}

/**
 * A job of its own (id = delivery id, retried by BullMQ) for a delivery of a job of several, `attemptOffset` attempts
 * already made.
 */
function jobOfOne(data: DeliveryJobData, item: DeliveryItem, attemptOffset: number): DeliveryJobData {
  const { channelId: _channel, prev: _prev, prevJobId: _prevJobId, ...rest } = item;
  return {
    ...data,
    channelId: channelOfItem(data, item),
    deliveries: [{ ...rest, attemptOffset }],
    prev: 0,
    prevJobId: null,
    recovered: true,
  };
}

function errorOf(outcome: SendOutcome): string | null {
  if (succeeded(outcome)) return null;
  return outcome.kind === 'response' ? `HTTP ${outcome.statusCode}` : outcome.error;
}

function failureMessage(data: DeliveryJobData, s: Sent): string {
  return `delivery ${s.item.deliveryId} attempt ${s.attempt} to ${data.webhookId} failed: ${errorOf(s.outcome)}`;
}

function attemptRow(s: Sent): AttemptRow {
  const { item, outcome } = s;
  return {
    id: randomUUID(),
    deliveryId: item.deliveryId,
    attempt: s.attempt,
    statusCode: outcome.kind === 'response' ? outcome.statusCode : null,
    error: errorOf(outcome),
    success: succeeded(outcome),
    final: !s.again,
    durationMs: outcome.durationMs,
    attemptedOn: s.attemptedOn,
  };
}
