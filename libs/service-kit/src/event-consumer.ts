import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  changeStreamName,
  changeSubject,
  eventStreamName,
  eventSubject,
  parkedReplaySubject,
  type ParkedReplayReply,
  type ParkedReplayRequest,
} from '@switchboard/contracts';
import {
  deliveryLimitOf,
  EventParking,
  ReplayedMessage,
  type GroupHandler,
  type ParkingOptions,
} from './event-parking.js';
import { ensureChangeStream, ensureEventStream, ensureParkedStream } from './event-stream.js';
import type { JsonLogger } from './logger.js';

/** A durable pull consumer of the domain event stream, shared by every replica of a service. */
export interface EventConsumerSpec {
  /** Durable name. */
  name: string;
  description?: string;
  /** How long a delivered event may stay unacknowledged before JetStream delivers it again. */
  ackWaitMs: number;
  /** Deliveries of one event at most (-1: no limit). EventConsumerLoop sets it from its parking options. */
  maxDeliver?: number;
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
  return {
    name: eventStreamName(namespace),
    filterSubject: eventSubject(namespace, '>'),
    ensure: (jsm) => ensureEventStream(jsm, namespace),
  };
}

/** The change notice stream of a namespace (contracts `changes.ts`), as a ConsumedStream. */
export function changeStreamOf(namespace: string): ConsumedStream {
  return {
    name: changeStreamName(namespace),
    filterSubject: changeSubject(namespace, '>'),
    ensure: (jsm) => ensureChangeStream(jsm, namespace),
  };
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
export async function ensureEventConsumer(
  jsm: JetStreamManager,
  namespace: string,
  spec: EventConsumerSpec,
  consumed: ConsumedStream = eventStreamOf(namespace),
): Promise<void> {
  const stream = consumed.name;
  const mutable = {
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver ?? -1,
    max_ack_pending: spec.maxAckPending,
  };
  try {
    const c = (await jsm.consumers.info(stream, spec.name)).config;
    if (
      c.ack_wait !== mutable.ack_wait ||
      c.max_deliver !== mutable.max_deliver ||
      c.max_ack_pending !== mutable.max_ack_pending
    ) {
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
  /** Where events failing by themselves end (JetStream's max deliver follows `maxAttempts`). */
  parking: ParkingOptions;
  /**
   * The consumer's processing of a group of messages (settles each one; throws when the group
   * failed), used by `handle` and by replays of parked events.
   */
  process: GroupHandler;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * A consumer loop that processes each pulled event alone, in stream order, through the loop's
 * parking (`processOne` settles the message or throws); what arrives after `stop()` is handed back.
 */
export function oneByOneConsumerLoop(
  options: Omit<EventConsumerLoopOptions, 'process'>,
  processOne: (msg: JsMsg) => Promise<void>,
): EventConsumerLoop {
  const loop: EventConsumerLoop = new EventConsumerLoop(
    {
      ...options,
      process: async (group) => {
        for (const msg of group) await processOne(msg);
      },
    },
    async (messages) => {
      for await (const msg of messages) {
        if (loop.stopped) msg.nak();
        else await loop.handle([msg]);
      }
    },
  );
  return loop;
}

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
  private readonly parking: EventParking;
  private replays?: { nc: NatsConnection; subscription: Subscription };
  private parkedStreamOn?: NatsConnection;

  constructor(
    private readonly options: EventConsumerLoopOptions,
    private readonly session: (messages: ConsumerMessages) => Promise<void>,
  ) {
    this.parking = new EventParking({
      namespace: options.namespace,
      consumer: options.spec.name,
      stream: this.consumed.name,
      parking: options.parking,
      logger: options.logger,
      stopping: () => this.stopping,
      publish: (subject, data, msgID) => this.publishParked(subject, data, msgID),
    });
  }

  private get consumed(): ConsumedStream {
    return this.options.stream ?? eventStreamOf(this.options.namespace);
  }

  /**
   * Processes a group with the consumer's `process`; when the group fails, its events go one by
   * one, and one failing by itself is handed back until its last attempt, then parked.
   */
  handle(messages: readonly JsMsg[]): Promise<void> {
    return this.parking.handle(messages, this.options.process);
  }

  /** For a consumer running its own group logic: `messages` failed with `error`; see `handle`. */
  recover(messages: readonly JsMsg[], error: unknown): Promise<void> {
    return this.parking.recover(messages, error, this.options.process);
  }

  /** For a consumer running its own group logic: parks what is at its last delivery, answers the rest. */
  parkLastChances(messages: readonly JsMsg[]): Promise<readonly JsMsg[]> {
    return this.parking.parkLastChances(messages);
  }

  /** Parks an event now (it can never be processed: not readable, say) and acknowledges it. */
  park(msg: JsMsg, reason: string): Promise<void> {
    return this.parking.park(msg, reason);
  }

  private async publishParked(subject: string, data: Uint8Array, msgID: string): Promise<void> {
    const nc = await this.options.connection();
    if (this.parkedStreamOn !== nc) {
      await ensureParkedStream(await jetstreamManager(nc), this.options.namespace);
      this.parkedStreamOn = nc;
    }
    await jetstream(nc).publish(subject, data, { msgID });
  }

  /** Answers replays of this consumer's parked events (one replica of the service takes each). */
  private serveReplays(nc: NatsConnection): void {
    if (this.replays?.nc === nc) return;
    this.replays?.subscription.unsubscribe();
    const { namespace, parking, spec, logger } = this.options;
    const subscription = nc.subscribe(parkedReplaySubject(namespace, parking.service, spec.name), {
      queue: parking.service,
      callback: (error, msg) => {
        if (error) return;
        void Promise.resolve()
          .then(() => this.replay(msg.json<ParkedReplayRequest>()))
          .then(
            (reply) => msg.respond(JSON.stringify(reply)),
            (e: unknown) =>
              msg.respond(JSON.stringify({ ok: false, error: (e as Error).message } satisfies ParkedReplayReply)),
          );
      },
    });
    this.replays = { nc, subscription };
    logger.event('debug', 'answering replays of parked events', { consumer: spec.name });
  }

  /** Runs a parked event through the consumer's processing; ok once it acknowledged it. */
  async replay(request: ParkedReplayRequest): Promise<ParkedReplayReply> {
    const msg = new ReplayedMessage(
      request.subject,
      Buffer.from(request.payload, 'base64'),
      request.streamSequence,
      request.stream,
    );
    try {
      await this.options.process([msg as unknown as JsMsg]);
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
    return msg.outcome ?? { ok: false, error: 'the consumer left the event unsettled' };
  }

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
    this.replays?.subscription.unsubscribe();
    await this.messages?.close().catch(() => undefined);
    await Promise.race([this.loop, sleep(waitMs)]);
  }

  private async run(): Promise<void> {
    const { namespace, logger } = this.options;
    // Bounded deliveries, so that even a consumer created with max_deliver -1 gets a bound.
    const spec = { ...this.options.spec, maxDeliver: deliveryLimitOf(this.options.parking.maxAttempts) };
    const consumed = this.consumed;
    const stream = consumed.name;
    let failures = 0;
    while (!this.stopping) {
      try {
        const nc = await this.options.connection();
        const jsm = await jetstreamManager(nc);
        await consumed.ensure(jsm);
        await ensureEventConsumer(jsm, namespace, spec, consumed);
        this.serveReplays(nc);
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
        logger.event('warn', 'event consumer interrupted; attaching again', {
          consumer: spec.name,
          error: (e as Error).message,
        });
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
        if (
          s.type === 'consumer_deleted' ||
          (s.type === 'consumer_not_found' && s.count > 3) ||
          s.type === 'stream_not_found'
        ) {
          this.options.logger.event('warn', `event consumer: ${s.type}; attaching again`, {
            consumer: this.options.spec.name,
          });
          await messages.close().catch(() => undefined);
          return;
        }
      }
    } catch {
      // The pull ended (closed or failed): the loop notices and attaches again.
    }
  }
}
