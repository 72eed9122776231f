import { Injectable, Logger } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { WebhookWorkerConfig } from '../config.js';
import { DeliveryLogWriter } from '../log/delivery-log.writer.js';
import { DeliveryRepository, type AttemptRow } from '../log/delivery.repository.js';
import { WebhookResolver } from '../matching/webhook-resolver.js';
import { WebhookMetrics, type AttemptOutcome } from '../metrics/webhook-metrics.js';
import { InjectWebhookConfig } from '../tokens.js';
import { DeliveryQueue, RELIABLE_ATTEMPTS, orderingKey, type DeliveryJobData } from './delivery-queue.js';
import { HttpSender, type SendOutcome } from './http-sender.js';
import { KeySequencer } from './key-sequencer.js';
import { signatureHeaders } from './signatures.js';
import { TargetGuard } from './ssrf-guard.js';

export { orderingKey };

export type DeliveryResult = 'delivered' | 'skipped';

/** The body of a delivery: one EventInfo, or `{ batch: [...] }` for a batch webhook. */
export function deliveryBody(data: Pick<DeliveryJobData, 'batch' | 'events'>): string {
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

/** How long a delivery waits when its application's secret cannot be read (management-api down). */
const SECRET_RETRY_MS = 2000;

/** Deliveries this process finished recently (delivery id), remembered from the answer on, before their log is committed. */
const SETTLED_MEMORY = 20_000;

interface Sent {
  outcome: SendOutcome;
  attempt: number;
  again: boolean;
  attemptedOn: number;
}

/**
 * One attempt of one delivery (the use case behind the BullMQ processor):
 *
 * 1. Jobs with the same ordering key (webhook + channel, see orderingKey) send one after the other
 *    inside this replica, in stream order (KeySequencer): a request starts once the previous one
 *    was answered.
 * 2. Inside that sequence, a job that ran before (a retry, a job handed back after its replica
 *    died or its lock was lost, a job re-queued by the reconciler or after a failed add) checks
 *    that its delivery is still pending: in this process's memory of finished deliveries, then
 *    in PostgreSQL. Once a success (or a final failure) is known, nothing is sent again.
 * 3. The application's secret comes from the resolver (cached); when management-api cannot answer,
 *    the job waits `SECRET_RETRY_MS` without using up an attempt.
 * 4. The POST (see HttpSender). Then, outside the sequence, the attempt is logged with the
 *    delivery's state (DeliveryLogWriter groups rows from concurrent jobs into one statement) and
 *    only then the job finishes: success completes it; a failure that may be retried (network
 *    error, timeout, 5xx) of a reliable webhook with attempts left throws (BullMQ retries with
 *    exponential backoff); anything else fails the job for good (UnrecoverableError).
 */
@Injectable()
export class DeliverWebhook {
  private readonly logger = new Logger('DeliverWebhook');
  private readonly sequencer: KeySequencer;
  private readonly settled = new Set<string>();
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
    const guard = new TargetGuard({ allowPrivate: config.allowPrivateTargets, allowLoopback: config.allowLoopback });
    this.sender = new HttpSender(guard, { maxSocketsPerOrigin: config.maxSocketsPerOrigin });
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
    const predecessor = data.prevDeliveryId;
    const sent = await this.sequencer.run(
      orderingKey(data),
      data.order ?? 0,
      data.prev ?? 0,
      () => this.send(job, token),
      predecessor ? () => this.queue.inProgress(predecessor) : undefined,
    );
    if (sent === 'skipped') return 'skipped';
    return this.finish(job, sent);
  }

  private remember(deliveryId: string): void {
    this.settled.add(deliveryId);
    if (this.settled.size > SETTLED_MEMORY) this.settled.delete(this.settled.values().next().value!);
  }

  private async send(job: Job<DeliveryJobData>, token: string | undefined): Promise<Sent | 'skipped'> {
    const data = job.data;
    if (this.settled.has(data.deliveryId)) return 'skipped';
    if (job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0 || data.recovered) {
      const state = await this.repository.state(data.deliveryId);
      if (state !== 'pending') {
        this.logger.debug(`delivery ${data.deliveryId} is ${state ?? 'gone'}: skipped`);
        return 'skipped';
      }
    }
    let secret: string | null;
    try {
      secret = (await this.resolver.resolve(data.applicationId, data.channelId))?.sharedSecret ?? null;
    } catch (e) {
      this.logger.warn(`delivery ${data.deliveryId} waits: the secret of ${data.applicationId} is unavailable (${(e as Error).message})`);
      await job.moveToDelayed(Date.now() + SECRET_RETRY_MS, token);
      throw new DelayedError();
    }

    const attempt = data.attemptOffset + job.attemptsMade + 1;
    const lastAttempt = data.attemptOffset + (job.opts.attempts ?? 1);
    const attemptedOn = Date.now();
    let outcome: SendOutcome;
    if (secret === null) {
      outcome = { kind: 'refused', error: `application ${data.applicationId} is unknown`, durationMs: 0 };
    } else {
      const body = deliveryBody(data);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Switchboard-Webhooks/1.0',
        ...signatureHeaders(secret, data.deliveryId, Math.floor(attemptedOn / 1000), body),
      };
      outcome = await this.sender.send({ url: data.url, body, headers, timeoutMs: this.config.timeoutMs });
    }
    const again = !succeeded(outcome) && data.reliable && retryable(outcome) && attempt < Math.min(lastAttempt, RELIABLE_ATTEMPTS);
    if (!again) this.remember(data.deliveryId);
    return { outcome, attempt, again, attemptedOn };
  }

  private async finish(job: Job<DeliveryJobData>, sent: Sent): Promise<DeliveryResult> {
    const data = job.data;
    const { outcome, attempt, again, attemptedOn } = sent;
    const success = succeeded(outcome);
    const final = !again;
    const error = success ? null : outcome.kind === 'response' ? `HTTP ${outcome.statusCode}` : outcome.error;
    const first = data.events[0]!;
    const row: AttemptRow = {
      id: randomUUID(),
      deliveryId: data.deliveryId,
      webhookId: data.webhookId,
      webhookSource: data.source,
      organizationId: data.organizationId,
      applicationId: data.applicationId,
      channelId: data.channelId,
      eventId: first.id,
      eventType: first.type,
      eventIds: data.events.map((e) => e.id),
      eventCount: data.events.length,
      batch: data.batch,
      url: data.url,
      attempt,
      statusCode: outcome.kind === 'response' ? outcome.statusCode : null,
      error,
      success,
      final,
      durationMs: outcome.durationMs,
      attemptedOn,
      replayOf: data.replayOf,
    };
    // The job finishes only once its attempt is logged (DeliveryLogWriter retries until PostgreSQL
    // takes it): a delivery whose job is done is never pending in PostgreSQL, so the reconciler
    // cannot send it again, and a second run of this job (lock lost, Redis restarted) finds it
    // finished, in `settled` or in PostgreSQL.
    const logStarted = performance.now();
    await this.log.record(row);
    this.metrics.logWrite.observe((performance.now() - logStarted) / 1000);

    const source = data.source;
    this.metrics.attempts.inc({ source, outcome: outcomeLabel(outcome) });
    this.metrics.attemptDuration.observe({ source }, outcome.durationMs / 1000);
    if (attempt > 1) this.metrics.retries.inc({ source });
    if (final) this.metrics.deliveries.inc({ source, result: success ? 'succeeded' : 'failed' });
    if (success) {
      const answeredAt = attemptedOn + outcome.durationMs;
      for (const e of data.events) this.metrics.eventToDelivery.observe(Math.max(0, answeredAt - e.timestamp) / 1000);
      return 'delivered';
    }
    const message = `delivery ${data.deliveryId} attempt ${attempt} to ${data.webhookId} failed: ${error}`;
    if (again) throw new Error(message);
    throw new UnrecoverableError(message);
  }
}
