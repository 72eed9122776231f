import { Injectable, Logger } from '@nestjs/common';
import { jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { eventStreamName } from '@switchboard/contracts';
import { ensureEventStream, NatsClient } from '@switchboard/service-kit';
import type { WebhookWorkerConfig } from '../config.js';
import { InjectWebhookConfig } from '../tokens.js';
import { EventIntake, mergeGroups } from './event-intake.js';
import { CONSUMER_NAME, ensureConsumer } from './event-stream.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The durable pull consumer `webhook-worker` on the domain event stream (every replica pulls from
 * the same consumer, JetStream spreads the events). One reader keeps pulling (`consume`, up to
 * twice `WEBHOOK_EVENT_BATCH_SIZE` prefetched) into a buffer; one loop takes what is buffered (up
 * to `WEBHOOK_EVENT_BATCH_SIZE`) as a group and hands it to EventIntake, which acknowledges once
 * the deliveries are queued. When an event of the group goes to a batch webhook, the loop first
 * waits until `WEBHOOK_BATCH_WINDOW_MS` after the group's first event arrived and adds the events
 * that arrived within that window (so the events of one moment are planned together); other
 * groups go at once. Groups are handled one at a time, so stream order is kept within a replica.
 *
 * Shutdown: stops pulling, finishes the group in progress, and NAKs what is left in the buffer so
 * another replica takes it at once.
 */
@Injectable()
export class EventConsumer {
  private readonly logger = new Logger('EventConsumer');
  private messages: ConsumerMessages | undefined;
  private buffer: JsMsg[] = [];
  /** performance.now() when each buffered message arrived. */
  private arrivals: number[] = [];
  private readerDone = false;
  private wake: (() => void) | undefined;
  private stopping = false;
  private attached = false;
  private loop: Promise<void> | undefined;

  constructor(
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    private readonly nats: NatsClient,
    private readonly intake: EventIntake,
  ) {}

  /** Readiness: the consumer is attached to the stream. */
  isAttached(): boolean {
    return this.attached;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.messages?.close().catch(() => undefined);
    // The group in progress finishes; a loop stuck attaching (NATS down) is not waited for long.
    await Promise.race([this.loop, sleep(Math.max(1000, this.config.shutdownTimeoutMs - 2000))]);
    for (const msg of this.buffer.splice(0)) msg.nak();
    this.arrivals = [];
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.attach();
        failures = 0;
        await Promise.all([this.read(), this.process()]);
      } catch (e) {
        this.attached = false;
        if (this.stopping) break;
        failures++;
        this.logger.warn(`event consumer: ${(e as Error).message}; attaching again`);
        await sleep(Math.min(250 * failures, 5000));
      }
    }
    this.attached = false;
  }

  private async attach(): Promise<void> {
    const nc = await this.nats.connection$();
    const jsm = await jetstreamManager(nc);
    const ns = this.config.natsNamespace;
    await ensureEventStream(jsm, ns);
    await ensureConsumer(jsm, ns, { ackWaitMs: this.config.eventAckWaitMs, maxDeliver: this.config.eventMaxDeliver, maxAckPending: this.config.eventMaxAckPending });
    const consumer = await jetstream(nc).consumers.get(eventStreamName(ns), CONSUMER_NAME);
    this.messages = await consumer.consume({ max_messages: Math.max(2, this.config.eventBatchSize * 2) });
    this.attached = true;
    this.logger.log(`consuming ${eventStreamName(ns)} as ${CONSUMER_NAME}`);
    void this.watch(this.messages);
  }

  /** A deleted consumer or stream is not coming back by itself: close, so run() attaches again. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (s.type === 'consumer_deleted' || (s.type === 'consumer_not_found' && s.count > 3) || s.type === 'stream_not_found') {
        this.logger.warn(`event consumer: ${s.type}`);
        await messages.close().catch(() => undefined);
        return;
      }
    }
  }

  private async read(): Promise<void> {
    const messages = this.messages!;
    try {
      for await (const msg of messages) {
        this.buffer.push(msg);
        this.arrivals.push(performance.now());
        this.wake?.();
      }
    } finally {
      this.attached = false;
      this.readerDone = true;
      this.wake?.();
    }
  }

  private async process(): Promise<void> {
    this.readerDone = false;
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
      let taken = this.take(max);
      try {
        let group = await this.intake.prepare(taken);
        // A batch webhook wants the rest of the moment: wait out the coalescing window once, then
        // add what arrived within it. Groups without batch webhooks go at once.
        const wait = firstArrival + this.config.batchWindowMs - performance.now();
        if (group.batching && wait > 0 && taken.length < max && !this.stopping) {
          await sleep(wait);
          const more = this.take(max - taken.length, firstArrival + this.config.batchWindowMs);
          if (more.length > 0) {
            group = mergeGroups(group, await this.intake.prepare(more));
            taken = [...taken, ...more];
          }
        }
        await this.intake.commit(group, () => this.stopping);
      } catch (e) {
        this.logger.warn(`${taken.length} events not queued, handed back to JetStream: ${(e as Error).message}`);
        for (const msg of taken) msg.nak(1000);
        await sleep(250);
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
