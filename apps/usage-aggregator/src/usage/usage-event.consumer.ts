import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  EventConsumerLoop,
  oneByOneConsumerLoop,
  eventRedeliveryHorizonMs,
  JsonLogger,
  Metrics,
  retryWhileDependencyDown,
  SERVICE_CONFIG,
} from '@switchboard/service-kit';
import { Counter } from 'prom-client';
import { readUsageEvent } from './event-reader.js';
import { UsageLedger } from './usage-ledger.js';
import type { UsageAggregatorConfig } from '../config.js';

/** Durable consumer name: one per deployment namespace (the stream is per namespace). */
export const USAGE_CONSUMER = 'usage-aggregator';

/**
 * Reads the domain event stream with the durable pull consumer `usage-aggregator` (kept attached
 * by service-kit's EventConsumerLoop, on a NATS connection of its own) and applies each event to
 * the ledger, one at a time, in stream order. A message is acknowledged only after its
 * transaction committed; a failure hands it back (`nak` with a growing delay) so it comes again,
 * until its EVENT_MAX_ATTEMPTS-th delivery: then it is parked (service-kit's EventConsumerLoop), as
 * a malformed event is at once. Replicas share the durable
 * consumer, and the ledger makes a second application of the same event id change nothing.
 */
@Injectable()
export class UsageEventConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private nc?: Promise<NatsConnection>;
  private readonly consumer: EventConsumerLoop;
  private readonly outcomes: Counter<'outcome'>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: UsageAggregatorConfig,
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
    this.consumer = oneByOneConsumerLoop(
      {
        namespace: config.natsNamespace,
        spec: {
          name: USAGE_CONSUMER,
          description: 'usage-aggregator: participant minutes and messages',
          ackWaitMs: 15_000,
          maxAckPending: 1000,
        },
        maxMessages: 32,
        connection: () => this.connection(),
        logger,
        parking: { service: 'usage-aggregator', maxAttempts: config.eventMaxAttempts, registry: metrics.registry },
      },
      (msg) => this.handle(msg),
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

  private async handle(msg: JsMsg): Promise<void> {
    let fact;
    try {
      fact = readUsageEvent(msg.json<unknown>());
    } catch {
      fact = { kind: 'invalid' as const, eventId: null, reason: 'the message is not JSON' };
    }
    if (fact.kind === 'invalid') {
      this.outcomes.inc({ outcome: 'invalid' });
      await this.consumer.park(msg, `malformed event: ${fact.reason}`);
      return;
    }
    if (fact.kind === 'ignored') {
      this.outcomes.inc({ outcome: 'ignored' });
      msg.ack();
      return;
    }
    let outcome;
    try {
      // While PostgreSQL is down the event stays in hand (never parked, never overtaken).
      const applied = fact;
      outcome = await retryWhileDependencyDown(() => this.ledger.apply(applied), {
        stopping: () => this.consumer.stopped,
        keepAlive: () => msg.working(),
        onRetry: (e, tries) =>
          this.logger.event('warn', 'usage consumer: PostgreSQL is unavailable; applying the event again', {
            eventId: applied.eventId,
            tries,
            error: (e as Error).message,
          }),
      });
    } catch (e) {
      // Handed back with a growing delay, or parked after its attempts (EventConsumerLoop.handle).
      this.outcomes.inc({ outcome: 'failed' });
      throw e;
    }
    this.outcomes.inc({ outcome });
    msg.ack();
    if (outcome === 'duplicate')
      this.logger.event('debug', 'usage consumer: event already applied', { eventId: fact.eventId });
  }

  /** Stops pulling, lets the event in hand finish (its ack included), then closes the connection. */
  async onApplicationShutdown(): Promise<void> {
    // The loop may also be waiting for NATS to come back: not waited for long.
    await this.consumer.stop(2000);
    const nc = await this.nc?.catch(() => undefined);
    if (nc && !nc.isClosed()) await nc.drain().catch(() => undefined);
  }
}
