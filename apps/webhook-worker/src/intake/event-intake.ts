import { Injectable, Logger } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DomainEvent } from '@switchboard/contracts';
import { redeliveryDelayMs, retryWhileDependencyDown } from '@switchboard/service-kit';
import type { WebhookWorkerConfig } from '../config.js';
import { DeliveryQueue, jobIdOf, lanesOf, type DeliveryJobData } from '../delivery/delivery-queue.js';
import { DeliveryRepository, UncertainIntake, type IntakeCommit } from '../log/delivery.repository.js';
import { channelOf, webhooksOfEvent } from '../matching/matching.js';
import { WebhookResolver, type Resolution } from '../matching/webhook-resolver.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { decodeDomainEvent } from './event-stream.js';
import { InjectWebhookConfig } from '../tokens.js';
import {
  planDeliveries,
  planJobs,
  type MatchedEvent,
  type PlannedDelivery,
  type PlannedJob,
} from './delivery-planner.js';

/** Events decoded per turn of the event loop. */
const SLICE = 250;

/** How long an event whose configuration could not be read waits before JetStream hands it over again. */
const DEFER_MS = 1000;

/** The job of planned deliveries (of one target, see planJobs). */
export function jobOf(deliveries: readonly PlannedDelivery[], replayOf: string | null = null): DeliveryJobData {
  const d = deliveries[0]!;
  return {
    webhookId: d.webhook.id,
    source: d.webhook.source,
    url: d.webhook.url,
    batch: d.webhook.batch,
    reliable: d.webhook.reliable,
    organizationId: d.organizationId,
    applicationId: d.applicationId,
    channelId: d.channelId,
    deliveries: deliveries.map((x) => ({
      deliveryId: x.id,
      events: x.events,
      order: x.order,
      attemptOffset: 0,
      replayOf,
      ...(x.channelId !== d.channelId ? { channelId: x.channelId } : {}),
    })),
  };
}

/** Parks a message that can never be queued (service-kit's EventConsumerLoop.park). */
export type ParkUnusable = (msg: JsMsg, reason: string) => Promise<void>;

export interface IntakeResult {
  acked: number;
  deliveries: number;
}

/** Decoded, resolved and matched messages, not yet committed. */
export interface PreparedGroup {
  ready: Array<{ msg: JsMsg; matched: MatchedEvent }>;
  /** Some event goes to a batch webhook: the consumer waits for the rest of its moment. */
  batching: boolean;
}

export function mergeGroups(a: PreparedGroup, b: PreparedGroup): PreparedGroup {
  return { ready: [...a.ready, ...b.ready], batching: a.batching || b.batching };
}

/**
 * Turns a group of stream messages into queued deliveries, then acknowledges them (README "Path of
 * an event"): decode (unusable: parked), resolve webhooks (unavailable: NAKed with a delay), one
 * transaction marking the events processed and writing their deliveries, one BullMQ round trip for
 * the jobs, then the acks. A crash before the jobs are added leaves pending deliveries the
 * reconciler queues; a crash before the acks brings back events already processed.
 */
/** A previous delivery of the same ordering key older than this is surely finished (or retrying). */
const PREDECESSOR_MEMORY_MS = 5000;
const MAX_ORDERING_KEYS = 100_000;

@Injectable()
export class EventIntake {
  private readonly logger = new Logger('EventIntake');
  /** Per ordering key, the last delivery this replica queued (for the `prev` of the next one). */
  private readonly lastQueued = new Map<string, { order: number; id: string; at: number }>();

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    private readonly resolver: WebhookResolver,
    private readonly repository: DeliveryRepository,
    private readonly queue: DeliveryQueue,
    private readonly metrics: WebhookMetrics,
  ) {}

  async handle(messages: readonly JsMsg[], stopping: () => boolean, park: ParkUnusable): Promise<IntakeResult> {
    return this.commit(await this.prepare(messages, park), stopping);
  }

  /** Steps 1 and 2. Unusable messages are parked and deferred ones NAKed here. */
  async prepare(messages: readonly JsMsg[], park: ParkUnusable): Promise<PreparedGroup> {
    const unusable: Array<Promise<void>> = [];
    const events: Array<{ msg: JsMsg; domain: DomainEvent; channelId: string | null }> = [];
    for (let i = 0; i < messages.length; i++) {
      // A large group is decoded in slices: answers and commits waiting on the event loop go in between.
      if (i > 0 && i % SLICE === 0) await nextTurn();
      const msg = messages[i]!;
      const decoded = decodeDomainEvent(msg.data);
      if (!decoded.ok) {
        this.metrics.events.inc({ outcome: 'invalid' });
        unusable.push(park(msg, `unusable event message: ${decoded.reason}`));
        continue;
      }
      events.push({ msg, domain: decoded.value, channelId: channelOf(decoded.value.event) });
    }

    // Resolve each (application, channel) once.
    const lookups = new Map<string, Promise<Resolution | Error>>();
    for (const e of events) {
      const key = `${e.domain.applicationId}\u0000${e.channelId ?? ''}`;
      if (!lookups.has(key)) {
        lookups.set(
          key,
          this.resolver
            .resolve(e.domain.applicationId, e.channelId)
            .catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
        );
      }
    }
    const resolved = new Map<string, Resolution | Error>();
    await Promise.all([...unusable, ...[...lookups].map(async ([key, p]) => resolved.set(key, await p))]);

    const deferred: JsMsg[] = [];
    const ready: PreparedGroup['ready'] = [];
    let batching = false;
    for (const e of events) {
      const r = resolved.get(`${e.domain.applicationId}\u0000${e.channelId ?? ''}`);
      if (r instanceof Error) {
        deferred.push(e.msg);
        continue;
      }
      const webhooks = r ? webhooksOfEvent(r.webhooks, e.domain) : [];
      if (webhooks.some((w) => w.batch)) batching = true;
      ready.push({
        msg: e.msg,
        matched: {
          event: e.domain.event,
          seq: e.msg.seq,
          applicationId: e.domain.applicationId,
          organizationId: r?.organizationId ?? e.domain.organizationId,
          channelId: e.channelId,
          webhooks,
        },
      });
    }
    if (deferred.length > 0) {
      const reasons = new Set(
        [...resolved.values()].filter((v): v is Error => v instanceof Error).map((v) => v.message),
      );
      this.logger.warn(
        `${deferred.length} events wait: webhook configuration unavailable (${[...reasons].join('; ')})`,
      );
      this.metrics.events.inc({ outcome: 'deferred' }, deferred.length);
      // Growing: every hand-back is a delivery, and deliveries are bounded (EVENT_MAX_ATTEMPTS + 120).
      for (const msg of deferred) msg.nak(redeliveryDelayMs(msg.info.deliveryCount, 30_000, DEFER_MS));
    }
    return { ready, batching };
  }

  /** Steps 3 to 5. */
  async commit(group: PreparedGroup, stopping: () => boolean): Promise<IntakeResult> {
    const ack: JsMsg[] = [];
    const ready: PreparedGroup['ready'] = [];
    const seen = new Set<string>();
    for (const r of group.ready) {
      if (seen.has(r.matched.event.id)) {
        // The same event twice in one group (published twice outside the duplicate window).
        ack.push(r.msg);
        this.metrics.events.inc({ outcome: 'duplicate' });
        continue;
      }
      seen.add(r.matched.event.id);
      ready.push(r);
    }
    let jobs: PlannedJob[] = [];
    if (ready.length > 0) {
      const committed = await this.commitKeepingOrder(ready, stopping);
      jobs = committed.jobs;
      let queued = 0;
      let unmatched = 0;
      for (const r of ready) {
        if (!committed.fresh.has(r.matched.event.id)) continue;
        if (r.matched.webhooks.length > 0) queued++;
        else unmatched++;
      }
      this.metrics.events.inc({ outcome: 'queued' }, queued);
      this.metrics.events.inc({ outcome: 'unmatched' }, unmatched);
      this.metrics.events.inc({ outcome: 'duplicate' }, ready.length - committed.fresh.size);
      if (jobs.length > 0) {
        const added = await this.queue.addAllPersistently(this.withPredecessors(jobs), stopping);
        if (!added) {
          // Shutting down: leave the messages unacknowledged; the deliveries are committed and the
          // reconciler (of any replica) queues them.
          return { acked: 0, deliveries: 0 };
        }
      }
      for (const r of ready) ack.push(r.msg);
    }
    for (const msg of ack) msg.ack();
    return { acked: ack.length, deliveries: jobs.reduce((n, j) => n + j.deliveries.length, 0) };
  }

  /**
   * Step 3, done again while PostgreSQL is down (restarting, say), the events kept in hand
   * (`working` tells JetStream so) instead of handed back while later groups go on: they would come
   * back after later events, and their deliveries after later ones of the same channel. A commit
   * cut off by the outage may have happened all the same: once PostgreSQL answers, its outcome is
   * looked up, and if it committed, its jobs are queued now (a new commit would find the events
   * processed and leave their deliveries to the reconciler, behind later ones). Any other failure,
   * or any while stopping, is thrown (the consumer hands the events back).
   */
  private async commitKeepingOrder(ready: PreparedGroup['ready'], stopping: () => boolean): Promise<IntakeCommit> {
    let uncertain: UncertainIntake | undefined;
    return retryWhileDependencyDown(
      async () => {
        if (uncertain) {
          const status = await this.repository.intakeStatus(uncertain);
          if (status === 'committed') {
            this.logger.log(
              `the intake of ${ready.length} events cut off by the outage had committed: its jobs are queued now`,
            );
            return uncertain.written;
          }
          // Not known yet (the server has not noticed the connection is gone): wait as for an outage.
          if (status === 'in progress') throw uncertain;
          uncertain = undefined;
        }
        try {
          return await this.repository.commitIntake(
            ready.map((r) => r.matched.event.id),
            (fresh) =>
              planJobs(
                planDeliveries(ready.filter((r) => fresh.has(r.matched.event.id)).map((r) => r.matched)),
                this.config.deliveriesPerJob,
              ),
            Date.now(),
          );
        } catch (e) {
          if (e instanceof UncertainIntake) uncertain = e;
          throw e;
        }
      },
      {
        stopping,
        keepAlive: () => {
          for (const r of ready) r.msg.working();
        },
        // Well within the ack wait, so that JetStream does not hand the events to another replica meanwhile.
        maxDelayMs: Math.min(2000, this.config.eventAckWaitMs / 3),
        onRetry: (e, tries) =>
          this.logger.warn(
            `PostgreSQL is unavailable; the intake of ${ready.length} events is tried again (try ${tries}): ${(e as Error).message}`,
          ),
      },
    );
  }

  /** The jobs (in stream order), each lane naming the recent delivery before it on its ordering key. */
  private withPredecessors(planned: readonly PlannedJob[]): DeliveryJobData[] {
    const now = Date.now();
    const jobs = planned.map((p) => {
      const job = jobOf(p.deliveries);
      const id = jobIdOf(job);
      for (const lane of lanesOf(job)) {
        const last = this.lastQueued.get(lane.key);
        if (last && now - last.at < PREDECESSOR_MEMORY_MS && last.order < lane.order) {
          lane.items[0]!.prev = last.order;
          lane.items[0]!.prevJobId = last.id;
        }
        this.lastQueued.delete(lane.key);
        this.lastQueued.set(lane.key, { order: lane.order, id, at: now });
      }
      return job;
    });
    if (this.lastQueued.size > MAX_ORDERING_KEYS) {
      for (const key of this.lastQueued.keys()) {
        if (this.lastQueued.size <= MAX_ORDERING_KEYS * 0.9) break;
        this.lastQueued.delete(key);
      }
    }
    return jobs;
  }
}
