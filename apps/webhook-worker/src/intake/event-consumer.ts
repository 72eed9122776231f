import { Injectable } from '@nestjs/common';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { EventConsumerLoop, JsonLogger, Metrics, NatsClient } from '@switchboard/service-kit';
import type { WebhookWorkerConfig } from '../config.js';
import { InjectWebhookConfig } from '../tokens.js';
import { EventIntake, mergeGroups } from './event-intake.js';

/** Durable name of the webhook-worker consumer on the domain event stream (shared by every replica). */
export const CONSUMER_NAME = 'webhook-worker';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The durable pull consumer `webhook-worker` on the domain event stream (shared by the replicas,
 * kept attached by service-kit's EventConsumerLoop). One reader pulls into a buffer; one loop hands
 * what is buffered to EventIntake as a group, one group at a time (stream order within a replica),
 * waiting out `WEBHOOK_BATCH_WINDOW_MS` first when an event goes to a batch webhook. A failed group
 * is retried event by event, then parked (README "Consuming the stream").
 */
@Injectable()
export class EventConsumer {
  private readonly consumer: EventConsumerLoop;
  private buffer: JsMsg[] = [];
  /** performance.now() when each buffered message arrived. */
  private arrivals: number[] = [];
  private readerDone = false;
  private wake: (() => void) | undefined;

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    nats: NatsClient,
    logger: JsonLogger,
    private readonly intake: EventIntake,
    metrics: Metrics,
  ) {
    this.consumer = new EventConsumerLoop(
      {
        namespace: config.natsNamespace,
        spec: { name: CONSUMER_NAME, ackWaitMs: config.eventAckWaitMs, maxAckPending: config.eventMaxAckPending },
        maxMessages: Math.max(2, config.eventBatchSize * 2),
        connection: () => nats.connection$(),
        logger,
        parking: { service: 'webhook-worker', maxAttempts: config.eventMaxAttempts, registry: metrics.registry },
        process: async (messages) => {
          await this.intake.handle(messages, () => this.stopping, this.park);
        },
      },
      (messages) => {
        this.readerDone = false;
        return Promise.all([this.read(messages), this.process()]).then(() => undefined);
      },
    );
  }

  /** Readiness: the consumer is attached to the stream. */
  isAttached(): boolean {
    return this.consumer.attached;
  }

  start(): void {
    this.consumer.start();
  }

  async stop(): Promise<void> {
    const stopped = this.consumer.stop(Math.max(1000, this.config.shutdownTimeoutMs - 2000));
    this.wake?.();
    // The group in progress finishes; a loop stuck attaching (NATS down) is not waited for long.
    await stopped;
    for (const msg of this.buffer.splice(0)) msg.nak();
    this.arrivals = [];
  }

  private readonly park = (msg: JsMsg, reason: string) => this.consumer.park(msg, reason);

  private get stopping(): boolean {
    return this.consumer.stopped;
  }

  private async read(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const msg of messages) {
        this.buffer.push(msg);
        this.arrivals.push(performance.now());
        this.wake?.();
      }
    } finally {
      this.readerDone = true;
      this.wake?.();
    }
  }

  private async process(): Promise<void> {
    const max = this.config.eventBatchSize;
    for (;;) {
      if (this.buffer.length === 0) {
        if (this.readerDone || this.stopping) return;
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      if (this.stopping) return;
      const firstArrival = this.arrivals[0]!;
      let taken = [...(await this.consumer.parkLastChances(this.take(max)))];
      if (taken.length === 0) continue;
      try {
        let group = await this.intake.prepare(taken, this.park);
        // A batch webhook wants the rest of the moment: wait out the coalescing window once, then
        // add what arrived within it. Groups without batch webhooks go at once.
        const wait = firstArrival + this.config.batchWindowMs - performance.now();
        if (group.batching && wait > 0 && taken.length < max && !this.stopping) {
          await sleep(wait);
          const more = await this.consumer.parkLastChances(
            this.take(max - taken.length, firstArrival + this.config.batchWindowMs),
          );
          if (more.length > 0) {
            group = mergeGroups(group, await this.intake.prepare(more, this.park));
            taken = [...taken, ...more];
          }
        }
        await this.intake.commit(group, () => this.stopping);
      } catch (e) {
        // One event failing by itself must not hold back the group: they go one by one, and one
        // out of attempts is parked (EVENT_MAX_ATTEMPTS); a dependency down hands them all back.
        await this.consumer.recover(taken, e);
      }
    }
  }

  /** Takes up to `n` buffered messages (only those that arrived by `arrivedBy`, if given). */
  private take(n: number, arrivedBy = Infinity): JsMsg[] {
    let count = 0;
    while (count < n && count < this.buffer.length && this.arrivals[count]! <= arrivedBy) count++;
    this.arrivals.splice(0, count);
    return this.buffer.splice(0, count);
  }
}
