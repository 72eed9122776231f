import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager } from '@nats-io/jetstream';
import { eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';
import {
  EventConsumerLoop,
  eventRedeliveryHorizonMs,
  isDependencyDown,
  JsonLogger,
  NatsClient,
  redeliveryDelayMs,
  retryWhileDependencyDown,
  SERVICE_CONFIG,
  type EventConsumerSpec,
} from '@switchboard/service-kit';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingMetrics } from '../metrics.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type EventHandler = (event: DomainEvent) => Promise<void>;

/** NAK delay of a failed event: 500 ms after the first delivery, doubling, at most 60 s. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 60_000;
/** Deliveries after which an event that keeps failing is reported as stuck (about 5 minutes of retries). */
export const STUCK_AFTER_DELIVERIES = 12;

/**
 * JetStream side of the service: the durable consumer of the domain event stream (kept attached
 * by service-kit's EventConsumerLoop; one event at a time per replica: acknowledged after the
 * handler committed; while a dependency is down the event in hand is applied again until it goes
 * through, keeping the stream's order; any other failure is NAKed with a growing delay, at most
 * 60 s, and redelivered without limit: a lasting failure (disk full, a read-only failover, statement
 * timeouts) must not drop an event for good; one that failed STUCK_AFTER_DELIVERIES times is logged
 * as an error at every further failure and counted once in `recording_domain_events_stuck_total`)
 * and the publication of the service's own events.
 */
@Injectable()
export class EventBus implements OnApplicationShutdown {
  private consumer?: EventConsumerLoop;
  private jsm?: JetStreamManager;

  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
    private readonly metrics: RecordingMetrics,
  ) {}

  get streamName(): string {
    return eventStreamName(this.config.natsNamespace);
  }

  private get spec(): EventConsumerSpec {
    // Unlimited deliveries; an existing consumer's max_deliver is brought to it (ensureEventConsumer).
    return { name: this.config.eventsConsumerName, ackWaitMs: 60_000, maxDeliver: -1, maxAckPending: 1000 };
  }

  private async manager(): Promise<JetStreamManager> {
    this.jsm ??= await jetstreamManager(await this.nats.connection$());
    return this.jsm;
  }

  /** Readiness: attached to the event stream and pulling. */
  get attached(): boolean {
    return this.consumer?.attached ?? false;
  }

  /** How long JetStream may still deliver an event (see `eventRedeliveryHorizonMs`); null while it cannot tell. */
  async redeliveryHorizonMs(): Promise<number | null> {
    const jsm = await this.manager().catch(() => null);
    return jsm && eventRedeliveryHorizonMs(jsm, this.config.natsNamespace);
  }

  /** Messages not yet delivered plus delivered but unacknowledged: 0 when the consumer has caught up. */
  async backlog(): Promise<number> {
    const info = await (await this.manager()).consumers.info(this.streamName, this.config.eventsConsumerName);
    return info.num_pending + info.num_ack_pending;
  }

  /** Starts consuming in the background: attached as soon as NATS lets it, again after any interruption. */
  start(handler: EventHandler): void {
    this.consumer ??= new EventConsumerLoop(
      { namespace: this.config.natsNamespace, spec: this.spec, maxMessages: 64, connection: () => this.nats.connection$(), logger: this.logger },
      (messages) => this.consume(messages, handler),
    );
    this.consumer.start();
  }

  private async consume(messages: ConsumerMessages, handler: EventHandler): Promise<void> {
    for await (const msg of messages) {
      if (this.consumer!.stopped) {
        msg.nak();
        continue;
      }
      let event: DomainEvent;
      try {
        event = JSON.parse(decoder.decode(msg.data)) as DomainEvent;
        if (!event?.event?.id || typeof event.event.type !== 'string') throw new Error('not a DomainEvent');
      } catch (e) {
        this.logger.event('error', 'dropping an undecodable domain event', { subject: msg.subject, seq: msg.seq, error: (e as Error).message });
        msg.term('undecodable');
        continue;
      }
      try {
        // While a dependency is down the event stays in hand and is applied again: handed back, it
        // would come after later ones (a connection's close applied before its connect).
        await retryWhileDependencyDown(() => handler(event), {
          stopping: () => this.consumer!.stopped,
          keepAlive: () => msg.working(),
          onRetry: (e, tries) =>
            this.logger.event('warn', 'a dependency is down; applying the event again', { eventId: event.event.id, type: event.event.type, tries, error: (e as Error).message }),
        });
        msg.ack();
      } catch (e) {
        if (this.consumer!.stopped && isDependencyDown(e)) {
          // Stopping while a dependency is down: the next replica takes it at once.
          msg.nak();
          continue;
        }
        const attempt = msg.info.deliveryCount;
        const retryInMs = redeliveryDelayMs(attempt, RETRY_MAX_MS, RETRY_FIRST_MS);
        const stuck = attempt >= STUCK_AFTER_DELIVERIES;
        if (attempt === STUCK_AFTER_DELIVERIES) this.metrics.stuckEvents.inc();
        this.logger.event(stuck ? 'error' : 'warn', stuck ? 'a domain event keeps failing; it is redelivered until it goes through' : 'applying a domain event failed; it will be redelivered', {
          eventId: event.event.id,
          type: event.event.type,
          attempt,
          retryInMs,
          error: (e as Error).message,
        });
        msg.nak(retryInMs);
      }
    }
  }

  /** Publishes domain events (Nats-Msg-Id = event id, so a retried publish is not duplicated); the Outbox relay calls it. */
  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const js = jetstream(await this.nats.connection$());
    for (const e of events) {
      await js.publish(eventSubject(this.config.natsNamespace, e.event.type), encoder.encode(JSON.stringify(e)), { msgID: e.event.id });
    }
  }

  /** Stops taking events; the message in flight finishes (its ack is sent) before this resolves. */
  async stop(): Promise<void> {
    await this.consumer?.stop(Math.max(1000, this.config.shutdownTimeoutMs - 2000));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }
}
