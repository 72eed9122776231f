import type { JsMsg } from '@nats-io/jetstream';
import { parkedMessageId, parkedSubject, safeText, type ParkedEventMessage } from '@switchboard/contracts';
import { Counter, type Registry } from 'prom-client';
import { isDependencyDown } from './errors.js';
import type { JsonLogger } from './logger.js';

/** How a consumer's events that fail by themselves end: parked after `maxAttempts` deliveries. */
export interface ParkingOptions {
  /** The service owning the consumer: replays of its parked events go to it. */
  service: string;
  /** Deliveries of an event that fails by itself before it is parked (EVENT_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The service's metrics registry (for `events_parked_total`). */
  registry: Registry;
}

/**
 * JetStream's max deliver of a consumer that parks after `maxAttempts`: room for about an hour of
 * deliveries that were no attempt (handed back at shutdown or while a configuration cannot be read,
 * at most 30 s apart), while an event that makes its consumer crash every time still ends.
 */
export function deliveryLimitOf(maxAttempts: number): number {
  return maxAttempts + 120;
}

/** Deliveries kept back from JetStream's limit so that parking an event at its last chance can itself be retried. */
const PARKING_DELIVERIES = 10;

/**
 * Whether this delivery is among the last before JetStream would drop the event: it is parked rather than processed
 * (an outage longer than the deliveries cover, or a consumer that crashed on it every time).
 */
export function isLastChance(msg: JsMsg, maxAttempts: number): boolean {
  return msg.info.deliveryCount > deliveryLimitOf(maxAttempts) - PARKING_DELIVERIES;
}

/**
 * Processing of a group of messages: settles (ack, nak, term) each one it is done with; throws when the group failed.
 */
export type GroupHandler = (messages: readonly JsMsg[]) => Promise<void>;

/** Publishes a parked event to the parked stream (Nats-Msg-Id `msgID`); throws when JetStream did not store it. */
export type ParkedPublisher = (subject: string, data: Uint8Array, msgID: string) => Promise<void>;

/**
 * True once the message was acknowledged, handed back or terminated (JsMsgImpl's own flag; a replayed message keeps one
 * too).
 */
export function isSettled(msg: JsMsg): boolean {
  return (msg as unknown as { didAck?: boolean }).didAck === true;
}

/** A message handed to a consumer by a replay: records how the processing settled it instead of telling JetStream. */
export class ReplayedMessage {
  didAck = false;
  outcome: { ok: true } | { ok: false; error: string } | undefined;
  readonly redelivered = true;
  readonly headers = undefined;
  readonly info: {
    stream: string;
    streamSequence: number;
    deliveryCount: number;
    pending: number;
    timestampNanos: number;
    redelivered: boolean;
  };

  constructor(
    readonly subject: string,
    readonly data: Uint8Array,
    readonly seq: number,
    stream: string,
  ) {
    this.info = {
      stream,
      streamSequence: seq,
      deliveryCount: 1,
      pending: 0,
      timestampNanos: Date.now() * 1e6,
      redelivered: true,
    };
  }

  json<T>(): T {
    return JSON.parse(this.string()) as T;
  }
  string(): string {
    return new TextDecoder().decode(this.data);
  }
  ack(): void {
    this.settle({ ok: true });
  }
  nak(): void {
    this.settle({ ok: false, error: 'handed back: it cannot be processed now' });
  }
  term(reason = 'terminated'): void {
    this.settle({ ok: false, error: reason });
  }
  /** Parking a replayed event is failing its replay (it stays parked with this error). */
  fail(error: string): void {
    this.settle({ ok: false, error });
  }
  working(): void {}

  private settle(outcome: NonNullable<ReplayedMessage['outcome']>): void {
    if (this.didAck) return;
    this.didAck = true;
    this.outcome = outcome;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

let parkedCounters = new WeakMap<Registry, Counter<'consumer'>>();

function parkedCounter(registry: Registry): Counter<'consumer'> {
  let counter = parkedCounters.get(registry);
  if (!counter) {
    counter = new Counter({
      name: 'events_parked_total',
      help: 'Events a durable consumer parked (dead-lettered) and moved on from, by consumer',
      labelNames: ['consumer'],
      registers: [registry],
    });
    parkedCounters.set(registry, counter);
  }
  return counter;
}

/** For tests that build many registries' worth of consumers: forget the counters made so far. */
export function resetParkedCounters(): void {
  parkedCounters = new WeakMap();
}

export interface EventParkingContext {
  namespace: string;
  consumer: string;
  /** The stream the consumer reads. */
  stream: string;
  parking: ParkingOptions;
  logger: JsonLogger;
  publish: ParkedPublisher;
  /** True once the consumer stops: what is not done is handed back at once. */
  stopping: () => boolean;
}

/**
 * What keeps one event from holding back the others: a group that fails is processed again in
 * halves down to event by event; an event failing by itself is handed back with a growing delay until its
 * `maxAttempts`th delivery, then parked (published to the parked stream, then acknowledged). A
 * dependency that is down (isDependencyDown) never parks anything: those events are handed back.
 */
export class EventParking {
  private readonly parked: Counter<'consumer'>;

  constructor(private readonly context: EventParkingContext) {
    this.parked = parkedCounter(context.parking.registry);
  }

  /** Parks the messages at their last chance (see isLastChance) and answers the others, to be processed. */
  async parkLastChances(messages: readonly JsMsg[]): Promise<readonly JsMsg[]> {
    const lastChance = messages.filter((msg) => isLastChance(msg, this.context.parking.maxAttempts));
    for (const msg of lastChance) {
      const reason = `delivered ${msg.info.deliveryCount} times without an outcome; parked before JetStream drops it`;
      await this.park(msg, reason);
    }
    return lastChance.length === 0 ? messages : messages.filter((msg) => !lastChance.includes(msg));
  }

  /** Runs `handler` on the group; when it fails, recovers (see `recover`). */
  async handle(messages: readonly JsMsg[], handler: GroupHandler): Promise<void> {
    messages = await this.parkLastChances(messages);
    if (messages.length === 0) return;
    try {
      await handler(messages);
    } catch (e) {
      await this.recover(messages, e, handler);
    }
  }

  /**
   * After `handler` failed with `error` on `messages`: while stopping or when a dependency is down,
   * hands back what is not settled; otherwise a group is processed again in halves (in stream
   * order) down to single events, and a single event's failure counts as a failed attempt.
   */
  async recover(messages: readonly JsMsg[], error: unknown, handler: GroupHandler): Promise<void> {
    const open = messages.filter((m) => !isSettled(m));
    if (open.length === 0) return;
    if (this.context.stopping() || isDependencyDown(error)) {
      for (const msg of open) msg.nak(this.context.stopping() ? undefined : retryDelayMs(msg));
      return;
    }
    if (messages.length > 1) {
      // Halves, in stream order, down to single events: a few poison events among thousands cost
      // a few dozen smaller groups, not one transaction per event.
      this.context.logger.event('warn', 'event group failed; processing it again in halves down to single events', {
        consumer: this.context.consumer,
        count: open.length,
        error: messageOf(error),
      });
      const middle = Math.ceil(open.length / 2);
      for (const half of [open.slice(0, middle), open.slice(middle)]) {
        if (half.length === 0) continue;
        if (this.context.stopping()) half.forEach((msg) => msg.nak());
        else await this.handle(half, handler);
      }
      return;
    }
    await this.failed(open[0]!, error);
  }

  /** One event failed by itself: handed back with a growing delay, or parked once it had its attempts. */
  async failed(msg: JsMsg, error: unknown): Promise<void> {
    const attempts = msg.info.deliveryCount;
    if (msg instanceof ReplayedMessage || attempts >= this.context.parking.maxAttempts) {
      await this.park(msg, messageOf(error));
      return;
    }
    const retryInMs = retryDelayMs(msg);
    this.context.logger.event('warn', 'processing an event failed; it will come again', {
      consumer: this.context.consumer,
      seq: msg.seq,
      attempts,
      retryInMs,
      error: messageOf(error),
    });
    msg.nak(retryInMs);
  }

  /**
   * Parks the event now (unreadable, or out of attempts): published to the parked stream, then
   * acknowledged. When it cannot be published it is handed back: a parked event is never lost.
   */
  async park(msg: JsMsg, reason: string): Promise<void> {
    const error = safeText(reason);
    if (msg instanceof ReplayedMessage) {
      msg.fail(error);
      return;
    }
    const { namespace, consumer, stream, parking, logger } = this.context;
    const parked: ParkedEventMessage = {
      service: parking.service,
      consumer,
      stream,
      streamSequence: msg.seq,
      subject: msg.subject,
      payload: Buffer.from(msg.data).toString('base64'),
      error,
      attempts: msg.info.deliveryCount,
      parkedAt: Date.now(),
    };
    try {
      await this.context.publish(
        parkedSubject(namespace, parking.service, consumer),
        new TextEncoder().encode(JSON.stringify(parked)),
        parkedMessageId(stream, msg.seq, consumer),
      );
    } catch (e) {
      logger.event('warn', 'an event could not be parked; it will come again', {
        consumer,
        seq: msg.seq,
        error: messageOf(e),
      });
      msg.nak(retryDelayMs(msg));
      return;
    }
    this.parked.inc({ consumer });
    logger.event('error', 'event parked: the consumer moves on; list and replay it with ParkedEvents on interface B', {
      consumer,
      stream,
      seq: msg.seq,
      subject: msg.subject,
      attempts: parked.attempts,
      error,
    });
    msg.ack();
  }
}

/**
 * How long a message whose handling failed waits before JetStream hands it over again: 1 s,
 * doubling with every delivery, at most `maxMs` (default 30 s).
 */
export function redeliveryDelayMs(deliveryCount: number, maxMs = 30_000, firstMs = 1000): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(10, Math.max(0, deliveryCount - 1)));
}

function retryDelayMs(msg: JsMsg): number {
  return redeliveryDelayMs(msg.info.deliveryCount);
}
