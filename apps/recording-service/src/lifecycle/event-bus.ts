import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';
import {
  EventConsumerLoop,
  oneByOneConsumerLoop,
  eventRedeliveryHorizonMs,
  JsonLogger,
  Metrics,
  NatsClient,
  retryWhileDependencyDown,
  SERVICE_CONFIG,
  type EventConsumerSpec,
} from '@switchboard/service-kit';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingMetrics } from '../metrics.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type EventHandler = (event: DomainEvent) => Promise<void>;

/**
 * JetStream side of the service: the durable consumer of the domain event stream (kept attached
 * by service-kit's EventConsumerLoop; one event at a time per replica: acknowledged after the
 * handler committed; while a dependency is down the event in hand is applied again until it goes
 * through, keeping the stream's order; any other failure is NAKed with a growing delay until the
 * event's EVENT_MAX_ATTEMPTS-th delivery, then it is parked: listed on interface B, replayable once
 * the cause is fixed, so a lasting failure neither drops it nor holds back the others)
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
    private readonly registry: Metrics,
  ) {}

  get streamName(): string {
    return eventStreamName(this.config.natsNamespace);
  }

  private get spec(): EventConsumerSpec {
    // max_deliver follows EVENT_MAX_ATTEMPTS (EventConsumerLoop); an existing consumer's is brought to it.
    return { name: this.config.eventsConsumerName, ackWaitMs: 60_000, maxAckPending: 1000 };
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
    this.consumer ??= oneByOneConsumerLoop(
      {
        namespace: this.config.natsNamespace,
        spec: this.spec,
        maxMessages: 64,
        connection: () => this.nats.connection$(),
        logger: this.logger,
        parking: {
          service: 'recording-service',
          maxAttempts: this.config.eventMaxAttempts,
          registry: this.registry.registry,
        },
      },
      (msg) => this.apply(msg, handler),
    );
    this.consumer.start();
  }

  /**
   * One event: parked when unreadable; applied (again while a dependency is down), then acknowledged; any other failure
   * thrown.
   */
  private async apply(msg: JsMsg, handler: EventHandler): Promise<void> {
    let event: DomainEvent;
    try {
      event = JSON.parse(decoder.decode(msg.data)) as DomainEvent;
      if (!event?.event?.id || typeof event.event.type !== 'string') throw new Error('not a DomainEvent');
    } catch (e) {
      await this.consumer!.park(msg, `undecodable domain event: ${(e as Error).message}`);
      return;
    }
    try {
      // While a dependency is down the event stays in hand and is applied again: handed back, it
      // would come after later ones (a connection's close applied before its connect).
      await retryWhileDependencyDown(() => handler(event), {
        stopping: () => this.consumer!.stopped,
        keepAlive: () => msg.working(),
        onRetry: (e, tries) =>
          this.logger.event('warn', 'a dependency is down; applying the event again', {
            eventId: event.event.id,
            type: event.event.type,
            tries,
            error: (e as Error).message,
          }),
      });
    } catch (e) {
      this.metrics.events.inc({ outcome: 'failed' });
      throw e;
    }
    msg.ack();
  }

  /**
   * Publishes domain events (Nats-Msg-Id = event id, so a retried publish is not duplicated); the Outbox relay calls
   * it.
   */
  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const js = jetstream(await this.nats.connection$());
    for (const e of events) {
      await js.publish(eventSubject(this.config.natsNamespace, e.event.type), encoder.encode(JSON.stringify(e)), {
        msgID: e.event.id,
      });
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
