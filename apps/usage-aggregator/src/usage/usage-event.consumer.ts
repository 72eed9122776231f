import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName } from '@switchboard/contracts';
import { ensureEventStream, eventRedeliveryHorizonMs, JsonLogger, Metrics, SERVICE_CONFIG, type BaseConfig } from '@switchboard/service-kit';
import { Counter } from 'prom-client';
import { readUsageEvent } from './event-reader.js';
import { ensureUsageConsumer, USAGE_CONSUMER } from './event-stream.js';
import { UsageLedger } from './usage-ledger.js';

const RETRY_MS = 1000;
const MAX_NAK_DELAY_MS = 30_000;

/**
 * Reads the domain event stream with the durable pull consumer `usage-aggregator` and applies
 * each event to the ledger, one at a time, in stream order. A message is acknowledged only after
 * its transaction committed; a failure hands it back (`nak` with a growing delay) so it comes
 * again; a malformed event is terminated (logged, never redelivered). Replicas share the durable
 * consumer, and the ledger makes a second application of the same event id change nothing.
 */
@Injectable()
export class UsageEventConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private nc?: NatsConnection;
  private messages?: ConsumerMessages;
  private attached = false;
  private stopping = false;
  private loop?: Promise<void>;
  private inFlight: Promise<unknown> = Promise.resolve();
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
  }

  onApplicationBootstrap() {
    this.loop = this.run();
  }

  /** Readiness: connected to NATS, stream and durable consumer in place, messages being pulled. */
  async ready(): Promise<void> {
    if (!this.nc || this.nc.isClosed()) throw new Error('not connected to NATS');
    if (!this.attached) throw new Error('the usage consumer is not attached to the event stream');
    await this.nc.flush();
  }

  /** How long JetStream may still deliver an event (see `eventRedeliveryHorizonMs`); null while NATS cannot tell. */
  async redeliveryHorizonMs(floorMs: number): Promise<number | null> {
    if (!this.nc || this.nc.isClosed()) return null;
    const jsm = await jetstreamManager(this.nc).catch(() => null);
    return jsm && eventRedeliveryHorizonMs(jsm, this.config.natsNamespace, floorMs);
  }

  private async run(): Promise<void> {
    const ns = this.config.natsNamespace;
    while (!this.stopping) {
      try {
        this.nc ??= await connect({
          servers: this.config.natsUrl,
          name: `usage-aggregator-consumer-${process.pid}`,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
          waitOnFirstConnect: true,
          timeout: 2000,
        });
        const jsm = await jetstreamManager(this.nc);
        await ensureEventStream(jsm, ns);
        await ensureUsageConsumer(jsm, ns);
        const consumer = await jetstream(this.nc).consumers.get(eventStreamName(ns), USAGE_CONSUMER);
        const messages = await consumer.consume({ max_messages: 32 });
        this.messages = messages;
        this.attached = true;
        this.logger.event('info', 'usage consumer attached', { stream: eventStreamName(ns), consumer: USAGE_CONSUMER });
        void this.watch(messages);
        for await (const msg of messages) {
          if (this.stopping) {
            msg.nak();
            continue;
          }
          const handled = this.handle(msg);
          this.inFlight = handled;
          await handled;
        }
      } catch (e) {
        if (this.stopping) break;
        this.logger.event('warn', 'usage consumer interrupted; retrying', { error: (e as Error).message });
      } finally {
        this.attached = false;
      }
      if (!this.stopping) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  /** A deleted or vanished consumer ends this round; the loop re-creates it and goes on. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const s of messages.status()) {
        if (s.type === 'consumer_deleted' || s.type === 'consumer_not_found' || s.type === 'stream_not_found') {
          this.logger.event('warn', `usage consumer: ${s.type}; re-creating it`);
          await messages.close().catch(() => undefined);
          return;
        }
      }
    } catch {
      // The pull ended (closed or failed): the main loop notices and starts over.
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
      const delay = Math.min(MAX_NAK_DELAY_MS, RETRY_MS * 2 ** Math.min(10, msg.info.deliveryCount - 1));
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
    this.stopping = true;
    await this.inFlight.catch(() => undefined);
    await this.messages?.close().catch(() => undefined);
    // The loop ends once the pull is closed; it may also be waiting for NATS to come back.
    await Promise.race([this.loop?.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    if (this.nc && !this.nc.isClosed()) await this.nc.drain().catch(() => undefined);
  }
}
