import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, ReplayPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { changeStreamName, changeSubject, eventStreamName, eventSubject } from '@switchboard/contracts';
import { ensureChangeStream, ensureEventStream } from './event-stream.js';
import type { JsonLogger } from './logger.js';

/** A durable pull consumer of the domain event stream, shared by every replica of a service. */
export interface EventConsumerSpec {
  /** Durable name. */
  name: string;
  description?: string;
  /** How long a delivered event may stay unacknowledged before JetStream delivers it again. */
  ackWaitMs: number;
  /** Deliveries of one event at most (-1: no limit). */
  maxDeliver: number;
  /** Events delivered and not yet acknowledged at most (over all replicas). */
  maxAckPending: number;
}

/**
 * The stream a consumer reads: the domain event stream unless a loop says otherwise (the change
 * notice stream, `changeStreamOf`).
 */
export interface ConsumedStream {
  name: string;
  /** The consumer's filter subject. */
  filterSubject: string;
  /** Makes sure the stream exists (called before the consumer is ensured at every attachment). */
  ensure(jsm: JetStreamManager): Promise<unknown>;
}

/** The domain event stream of a namespace, as a ConsumedStream (the default of every consumer). */
export function eventStreamOf(namespace: string): ConsumedStream {
  return { name: eventStreamName(namespace), filterSubject: eventSubject(namespace, '>'), ensure: (jsm) => ensureEventStream(jsm, namespace) };
}

/** The change notice stream of a namespace (contracts `changes.ts`), as a ConsumedStream. */
export function changeStreamOf(namespace: string): ConsumedStream {
  return { name: changeStreamName(namespace), filterSubject: changeSubject(namespace, '>'), ensure: (jsm) => ensureChangeStream(jsm, namespace) };
}

function isCode(e: unknown, code: number): boolean {
  return e instanceof JetStreamApiError && e.code === code;
}

/**
 * Makes sure the durable consumer exists: created when missing, every event of the stream from its
 * start (events produced before the service first ran are delivered too; a consumer skips the
 * ones it already processed by event id), explicit acknowledgements. An existing consumer keeps
 * its delivery state; its ack wait, max deliver and max ack pending are brought to `spec` when they
 * differ. Race-safe: replicas ensuring it at the same moment all succeed.
 */
export async function ensureEventConsumer(jsm: JetStreamManager, namespace: string, spec: EventConsumerSpec, consumed: ConsumedStream = eventStreamOf(namespace)): Promise<void> {
  const stream = consumed.name;
  const mutable = { ack_wait: nanos(spec.ackWaitMs), max_deliver: spec.maxDeliver, max_ack_pending: spec.maxAckPending };
  try {
    const c = (await jsm.consumers.info(stream, spec.name)).config;
    if (c.ack_wait !== mutable.ack_wait || c.max_deliver !== mutable.max_deliver || c.max_ack_pending !== mutable.max_ack_pending) {
      await jsm.consumers.update(stream, spec.name, mutable);
    }
    return;
  } catch (e) {
    if (!isCode(e, JetStreamApiCodes.ConsumerNotFound)) throw e;
  }
  try {
    await jsm.consumers.add(stream, {
      durable_name: spec.name,
      ...(spec.description ? { description: spec.description } : {}),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      replay_policy: ReplayPolicy.Instant,
      filter_subject: consumed.filterSubject,
      ...mutable,
    });
  } catch (e) {
    // Another replica created it in between.
    await jsm.consumers.info(stream, spec.name).catch(() => {
      throw e;
    });
  }
}

/**
 * How long a message whose handling failed waits before JetStream hands it over again: 1 s,
 * doubling with every delivery, at most `maxMs` (default 30 s). For NAKs of a consumer that retries
 * while its dependency is down.
 */
export function redeliveryDelayMs(deliveryCount: number, maxMs = 30_000, firstMs = 1000): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(10, Math.max(0, deliveryCount - 1)));
}

export interface EventConsumerLoopOptions {
  namespace: string;
  spec: EventConsumerSpec;
  /** Events pulled ahead of the session (`consume`'s max_messages). */
  maxMessages: number;
  /** The NATS connection to pull on (awaited at every attachment). */
  connection: () => Promise<NatsConnection>;
  logger: JsonLogger;
  /** The stream to consume (default: the domain event stream of `namespace`). */
  stream?: ConsumedStream;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Keeps a durable consumer of the domain event stream attached, whatever happens to NATS: it
 * connects, ensures the stream and the consumer, starts pulling and hands the pulled messages to
 * `session`, which handles them (acknowledging each as its service's guarantees say) and returns
 * when they end. They end when the pull is closed or fails, and when the consumer or the stream is
 * deleted (the pull is closed then, since neither comes back by itself). The loop then attaches
 * again, after a pause growing with consecutive failures (250 ms to 5 s), until `stop()`.
 */
export class EventConsumerLoop {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private stopping = false;
  private attachedNow = false;

  constructor(
    private readonly options: EventConsumerLoopOptions,
    private readonly session: (messages: ConsumerMessages) => Promise<void>,
  ) {}

  /** Readiness: attached to the stream and pulling. */
  get attached(): boolean {
    return this.attachedNow;
  }

  /** True once `stop()` was called: a session hands back (NAKs) what it has not started on. */
  get stopped(): boolean {
    return this.stopping;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops pulling; resolves once the session in progress returned (the event in hand finished,
   * its acknowledgement sent), or after `waitMs` when it takes longer or NATS is unreachable.
   */
  async stop(waitMs: number): Promise<void> {
    this.stopping = true;
    await this.messages?.close().catch(() => undefined);
    await Promise.race([this.loop, sleep(waitMs)]);
  }

  private async run(): Promise<void> {
    const { namespace, spec, logger } = this.options;
    const consumed = this.options.stream ?? eventStreamOf(namespace);
    const stream = consumed.name;
    let failures = 0;
    while (!this.stopping) {
      try {
        const nc = await this.options.connection();
        const jsm = await jetstreamManager(nc);
        await consumed.ensure(jsm);
        await ensureEventConsumer(jsm, namespace, spec, consumed);
        const consumer = await jetstream(nc).consumers.get(stream, spec.name);
        const messages = await consumer.consume({ max_messages: this.options.maxMessages });
        this.messages = messages;
        if (this.stopping) {
          await messages.close().catch(() => undefined);
          break;
        }
        this.attachedNow = true;
        failures = 0;
        logger.event('info', 'event consumer attached', { stream, consumer: spec.name });
        void this.watch(messages);
        await this.session(messages);
      } catch (e) {
        if (this.stopping) break;
        failures++;
        logger.event('warn', 'event consumer interrupted; attaching again', { consumer: spec.name, error: (e as Error).message });
      } finally {
        this.attachedNow = false;
      }
      if (!this.stopping) await sleep(Math.min(250 * Math.max(1, failures), 5000));
    }
  }

  /** A deleted consumer or stream does not come back by itself: close the pull, so the loop attaches again. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const s of messages.status()) {
        if (s.type === 'consumer_deleted' || (s.type === 'consumer_not_found' && s.count > 3) || s.type === 'stream_not_found') {
          this.options.logger.event('warn', `event consumer: ${s.type}; attaching again`, { consumer: this.options.spec.name });
          await messages.close().catch(() => undefined);
          return;
        }
      }
    } catch {
      // The pull ended (closed or failed): the loop notices and attaches again.
    }
  }
}
