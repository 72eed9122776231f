import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { EventConsumerLoop, eventRedeliveryHorizonMs, JsonLogger, redeliveryDelayMs, Metrics, SERVICE_CONFIG, type BaseConfig } from '@switchboard/service-kit';
import { Counter } from 'prom-client';
import { readUsageEvent } from './event-reader.js';
import { UsageLedger } from './usage-ledger.js';

/** Durable consumer name: one per deployment namespace (the stream is per namespace). */
export const USAGE_CONSUMER = 'usage-aggregator';
const RETRY_MS = 1000;
const MAX_NAK_DELAY_MS = 30_000;

/**
 * Reads the domain event stream with the durable pull consumer `usage-aggregator` (kept attached
 * by service-kit's EventConsumerLoop, on a NATS connection of its own) and applies each event to
 * the ledger, one at a time, in stream order. A message is acknowledged only after its
 * transaction committed; a failure hands it back (`nak` with a growing delay) so it comes again;
 * a malformed event is terminated (logged, never redelivered). Replicas share the durable
 * consumer, and the ledger makes a second application of the same event id change nothing.
 */
@Injectable()
export class UsageEventConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private nc?: Promise<NatsConnection>;
  private readonly consumer: EventConsumerLoop;
  private readonly outcomes: Counter<'outcome'>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
    private readonly ledger: UsageLedger,
    private readonly logger: JsonLogger,
    metrics: Metrics,
  ) {
    this.outcomes = new Counter({
      name: 'usage_events_total',
      help: 'Domain events handled by usage-aggregator, by outcome (applied, duplicate, no-op, ignored, invalid, failed)',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    this.consumer = new EventConsumerLoop(
      {
        namespace: config.natsNamespace,
        spec: { name: USAGE_CONSUMER, description: 'usage-aggregator: participant minutes and messages', ackWaitMs: 15_000, maxDeliver: -1, maxAckPending: 1000 },
        maxMessages: 32,
        connection: () => this.connection(),
        logger,
      },
      (messages) => this.consume(messages),
    );
  }

  onApplicationBootstrap() {
    this.consumer.start();
  }

  /** The consumer's own connection (drained at shutdown, after the event in hand was acknowledged). */
  private connection(): Promise<NatsConnection> {
    this.nc ??= connect({
      servers: this.config.natsUrl,
      name: `usage-aggregator-consumer-${process.pid}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      waitOnFirstConnect: true,
      timeout: 2000,
    });
    // A first connection that failed is tried again at the next attachment.
    this.nc.catch(() => (this.nc = undefined));
    return this.nc;
  }

  /** Readiness: connected to NATS, stream and durable consumer in place, messages being pulled. */
  async ready(): Promise<void> {
    if (!this.consumer.attached) throw new Error('the usage consumer is not attached to the event stream');
    const nc = await this.nc!;
    if (nc.isClosed()) throw new Error('not connected to NATS');
    await nc.flush();
  }

  /** How long JetStream may still deliver an event (see `eventRedeliveryHorizonMs`); null while NATS cannot tell. */
  async redeliveryHorizonMs(floorMs: number): Promise<number | null> {
    const nc = await this.nc?.catch(() => undefined);
    if (!nc || nc.isClosed()) return null;
    const jsm = await jetstreamManager(nc).catch(() => null);
    return jsm && eventRedeliveryHorizonMs(jsm, this.config.natsNamespace, floorMs);
  }

  private async consume(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      if (this.consumer.stopped) msg.nak();
      else await this.handle(msg);
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
    let fact;
    try {
      fact = readUsageEvent(msg.json<unknown>());
    } catch {
      fact = { kind: 'invalid' as const, eventId: null, reason: 'the message is not JSON' };
    }
    if (fact.kind === 'invalid') {
      this.outcomes.inc({ outcome: 'invalid' });
      this.logger.event('error', 'usage consumer: malformed event dropped', { subject: msg.subject, seq: msg.seq, eventId: fact.eventId, reason: fact.reason });
      msg.term(fact.reason);
      return;
    }
    if (fact.kind === 'ignored') {
      this.outcomes.inc({ outcome: 'ignored' });
      msg.ack();
      return;
    }
    try {
      const outcome = await this.ledger.apply(fact);
      this.outcomes.inc({ outcome });
      msg.ack();
      if (outcome === 'duplicate') this.logger.event('debug', 'usage consumer: event already applied', { eventId: fact.eventId });
    } catch (e) {
      this.outcomes.inc({ outcome: 'failed' });
      const delay = redeliveryDelayMs(msg.info.deliveryCount, MAX_NAK_DELAY_MS, RETRY_MS);
      this.logger.event('warn', 'usage consumer: applying an event failed; it will come again', {
        eventId: fact.eventId,
        deliveryCount: msg.info.deliveryCount,
        retryInMs: delay,
        error: (e as Error).message,
      });
      msg.nak(delay);
    }
  }

  /** Stops pulling, lets the event in hand finish (its ack included), then closes the connection. */
  async onApplicationShutdown(): Promise<void> {
    // The loop may also be waiting for NATS to come back: not waited for long.
    await this.consumer.stop(2000);
    const nc = await this.nc?.catch(() => undefined);
    if (nc && !nc.isClosed()) await nc.drain().catch(() => undefined);
  }
}
