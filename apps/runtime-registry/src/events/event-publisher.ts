import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { DomainError, eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';
import { ensureEventStream, JsonLogger, NatsClient, ReadinessService, SERVICE_CONFIG, singleHeader, type RawRequest, type ReplyMsg } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { LiveStore } from '../store/live-store.js';

const decoder = new TextDecoder();
/** The head of every PubAck the stream answers (`{"stream":"…","seq":…}`): no error in it. */
const ACK_HEAD = Buffer.from('{"stream":');
const ERROR_FIELD = Buffer.from('"error"');

/**
 * Domain events to JetStream. Every event has a unique id (uuid) sent as `Nats-Msg-Id`, so the
 * stream stores it once even when it is published again (retries, relays) within the duplicate
 * window.
 *
 * - The stream `<ns>-events` (subjects `<ns>.events.>`, file storage, limits retention, max age and
 *   duplicate window from the configuration) is created at start-up, idempotently: replicas racing
 *   to create it both succeed, and a changed max age or window updates it.
 * - `publish` awaits the stream's acknowledgement of every event, retrying with backoff within
 *   EVENT_PUBLISH_TIMEOUT_MS. Events still unacknowledged then are parked in Redis (`P rt:outbox`)
 *   and the caller gets Unavailable: the change it asked for is applied, its events are late, not
 *   lost. The housekeeping pass relays parked events once the stream is back.
 */
@Injectable()
export class EventPublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private ensured = false;
  private stopping = false;
  private ensureLoop?: Promise<void>;

  constructor(
    private readonly nats: NatsClient,
    private readonly store: LiveStore,
    private readonly logger: JsonLogger,
    private readonly readiness: ReadinessService,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  get streamName(): string {
    return eventStreamName(this.config.natsNamespace);
  }

  onApplicationBootstrap() {
    this.readiness.register('event-stream', async () => {
      if (!this.ensured) throw new Error(`stream ${this.streamName} is not ensured yet`);
    });
    this.ensureLoop = this.keepEnsuring();
  }

  async beforeApplicationShutdown() {
    this.stopping = true;
    await this.ensureLoop?.catch(() => undefined);
  }

  /** Retries creating the stream until it exists (NATS may come up after the registry). */
  private async keepEnsuring(): Promise<void> {
    for (let attempt = 0; !this.stopping && !this.ensured; attempt++) {
      try {
        await this.ensureStream();
      } catch (e) {
        if (attempt % 10 === 0) this.logger.event('warn', 'event stream not ensured yet, retrying', { stream: this.streamName, error: (e as Error).message });
        await sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /** Creates the stream, or brings its limits to the configured ones. Safe to call from every replica at once. */
  async ensureStream(): Promise<void> {
    const jsm = await jetstreamManager(await this.nats.connection$(), { timeout: 5000 });
    const outcome = await ensureEventStream(jsm, this.config.natsNamespace, {
      enforce: true,
      limits: {
        maxAgeMs: this.config.eventStreamMaxAgeSeconds * 1000,
        duplicateWindowMs: this.config.eventStreamDuplicateWindowSeconds * 1000,
        replicas: this.config.eventStreamReplicas,
      },
    });
    if (outcome !== 'existing') this.logger.event('info', `event stream ${outcome}`, { stream: this.streamName });
    this.ensured = true;
  }

  /** The JetStream publish of one event: on its type's subject, its id as `Nats-Msg-Id`. */
  private publishRequest(event: DomainEvent): RawRequest {
    // Buffer.from takes small strings from Node's pool: cheaper than a TextEncoder.
    return { subject: eventSubject(this.config.natsNamespace, event.event.type), data: Buffer.from(JSON.stringify(event)), headers: singleHeader('Nats-Msg-Id', event.event.id) };
  }

  /**
   * Publishes one event and waits for the stream to store it (or to report it a duplicate): a
   * JetStream publish is a request on the event's subject answered with a PubAck (`{ stream, seq,
   * duplicate }`) or `{ error }`; nobody answering (no stream) is a NoResponders error. Sent
   * through the service's NatsClient (one shared reply inbox) rather than the JetStream client's
   * publish.
   */
  private async publishOne(event: DomainEvent, timeoutMs: number): Promise<void> {
    const nc = await this.nats.connection$();
    const r = this.publishRequest(event);
    checkAck((await this.nats.requestRaw(nc, r.subject, r.data, { timeoutMs: Math.max(50, Math.round(timeoutMs)), headers: r.headers })).data);
  }

  /** Publishes with retries and backoff until `deadline`; throws the last error when it passes. */
  private async publishWithRetry(event: DomainEvent, deadline: number, firstError?: unknown): Promise<void> {
    let delay = 25;
    if (firstError !== undefined) {
      // The first attempt went out with the operation's other events (`publish`) and failed.
      if (Date.now() + delay >= deadline) throw firstError;
      await sleep(delay);
      delay *= 2;
    }
    for (;;) {
      const remaining = deadline - Date.now();
      try {
        await this.publishOne(event, Math.min(1000, Math.max(50, remaining)));
        return;
      } catch (e) {
        if (Date.now() + delay >= deadline) throw e;
        await sleep(delay);
        delay = Math.min(delay * 2, 500);
      }
    }
  }

  /**
   * Publishes the events of one operation and waits for every acknowledgement. The first attempt
   * sends them all at once, in order (one request batch, one timer: the stream keeps their order);
   * an event that failed is retried on its own with backoff (a retry may then land after a later
   * event). On failure, parks the unacknowledged ones for the relay and throws Unavailable.
   */
  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const deadline = Date.now() + this.config.eventPublishTimeoutMs;
    let first: Array<PromiseSettledResult<ReplyMsg>>;
    try {
      const nc = await this.nats.connection$();
      first = await this.nats.requestRawMany(
        nc,
        events.map((e) => this.publishRequest(e)),
        { timeoutMs: Math.max(50, Math.min(1000, this.config.eventPublishTimeoutMs)) },
      );
    } catch (e) {
      // No connection (or the events could not be encoded): every event failed its first attempt.
      first = events.map((): PromiseRejectedResult => ({ status: 'rejected', reason: e }));
    }
    let retries: Array<Promise<void>> | undefined;
    for (let i = 0; i < events.length; i++) {
      const o = first[i]!;
      let error: unknown;
      if (o.status === 'rejected') error = o.reason;
      else {
        try {
          checkAck(o.value.data);
          continue;
        } catch (e) {
          error = e;
        }
      }
      (retries ??= new Array<Promise<void>>(events.length).fill(Promise.resolve()))[i] = this.publishWithRetry(events[i]!, deadline, error);
    }
    if (!retries) return;
    const outcomes = await Promise.allSettled(retries);
    const failed = events.filter((_, i) => outcomes[i]!.status === 'rejected');
    if (failed.length === 0) return;
    const reason = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as Error;
    try {
      await this.store.redis.rpush(this.store.keys.outbox(), ...failed.map((e) => JSON.stringify(e)));
      this.logger.event('error', 'event stream unavailable: events parked for relay', { count: failed.length, ids: failed.map((e) => e.event.id), error: reason?.message });
    } catch (parkError) {
      this.logger.event('error', 'event stream unavailable and events could not be parked: events lost', {
        ids: failed.map((e) => e.event.id),
        error: reason?.message,
        parkError: (parkError as Error).message,
      });
    }
    throw new DomainError('Unavailable', 'The event stream is unavailable: the change was applied and its events are queued for delivery.');
  }

  /** Relays parked events (oldest first); returns how many reached the stream. */
  async relayOutbox(batch = 100): Promise<number> {
    const key = this.store.keys.outbox();
    const raw = await this.store.redis.lrange(key, 0, batch - 1);
    let relayed = 0;
    for (const item of raw) {
      let event: DomainEvent;
      try {
        event = JSON.parse(item) as DomainEvent;
      } catch {
        await this.store.redis.lrem(key, 1, item);
        continue;
      }
      try {
        await this.publishOne(event, 2000);
      } catch {
        break; // still unavailable: keep the rest in order for the next pass
      }
      await this.store.redis.lrem(key, 1, item);
      relayed++;
    }
    if (relayed) this.logger.event('info', 'relayed parked events', { count: relayed });
    return relayed;
  }
}

/**
 * Throws unless the stream stored the event (or found it a duplicate). The usual answer, a PubAck
 * starting with `{"stream":` and without an `"error"`, is not parsed; anything else is.
 */
function checkAck(data: Uint8Array): void {
  const b = Buffer.from(data.buffer, data.byteOffset, data.length);
  if (b.length > ACK_HEAD.length && b.compare(ACK_HEAD, 0, ACK_HEAD.length, 0, ACK_HEAD.length) === 0 && b.indexOf(ERROR_FIELD) < 0) return;
  const ack = (data.length ? JSON.parse(decoder.decode(data)) : {}) as { stream?: string; error?: { code?: number; err_code?: number; description?: string } };
  if (ack.error) throw new Error(`the event stream refused the event: ${ack.error.description ?? ack.error.err_code ?? ack.error.code}`);
  if (!ack.stream) throw new Error('the event stream answered no acknowledgement');
}

function sleep(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}
