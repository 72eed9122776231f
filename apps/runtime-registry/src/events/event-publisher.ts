import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';
import {
  ensureEventStream,
  JsonLogger,
  NatsClient,
  ReadinessService,
  SERVICE_CONFIG,
  singleHeader,
  type RawRequest,
  type ReplyMsg,
} from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { OutboxStore, type Departure } from '../store/outbox-store.js';
import { checkAck, EventsParked, refusedForGood, sleep, unavailable, withTimeout } from './stream-acks.js';

export { EventsParked } from './stream-acks.js';

/** Every replica reads this often whether the outbox holds events: its view of it (see `publish`). */
const OUTBOX_POLL_MS = 100;
/**
 * `publish` trusts a view of the outbox read less than this long ago (counted from when the read
 * was sent) and asks Redis otherwise; a replica that parks events answers its caller no sooner
 * than this long after they are in the outbox, so every replica's view shows them by then.
 */
const OUTBOX_VIEW_MS = 500;
/**
 * Events per relay batch, batches per relay run, and the longest a batch waits for its
 * acknowledgements (at most half of EVENT_PUBLISH_TIMEOUT_MS: a batch sent while NATS was down
 * must not hold up, once it is back, the publishes queued behind it).
 */
const RELAY_BATCH = 100;
const RELAY_MAX_BATCHES = 50;
const RELAY_TIMEOUT_MS = 2000;
/** The relay lock's lease, renewed after every batch. */
const RELAY_LOCK_MS = 5000;

/** A publish waiting for its events, queued in the outbox, to be relayed. */
interface Waiter {
  /** The outbox's head counter once its last event is relayed. */
  target: number;
  settle(relayed: boolean): void;
  timer?: NodeJS.Timeout;
}

/**
 * Domain events to JetStream, each with its id as `Nats-Msg-Id`; unacknowledged events are parked
 * in the outbox and relayed in order, and while it holds events new ones queue behind them. See the
 * README, "Events" and "Event order across an outage".
 */
@Injectable()
export class EventPublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private ensured = false;
  private stopping = false;
  private ensureLoop?: Promise<void>;
  /** Whether the outbox held events, read at `sentAt` (performance.now() when the read was sent). */
  private view = { sentAt: -Infinity, parked: false };
  private viewTimer?: NodeJS.Timeout;
  /** This replica's relay run in flight (one at a time). */
  private relaying?: Promise<number>;
  /** This replica's loop relaying for its waiting publishes. */
  private draining?: Promise<void>;
  private readonly waiters = new Set<Waiter>();
  /** Owner of the relay lock. */
  private readonly owner = randomUUID();

  constructor(
    private readonly nats: NatsClient,
    private readonly outbox: OutboxStore,
    private readonly logger: JsonLogger,
    private readonly readiness: ReadinessService,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  get streamName(): string {
    return eventStreamName(this.config.natsNamespace);
  }

  /** Events the stream refused for good, kept for an operator. */
  get refusedKey(): string {
    return this.outbox.refusedKey;
  }

  onApplicationBootstrap() {
    this.readiness.register('event-stream', async () => {
      if (!this.ensured) throw new Error(`stream ${this.streamName} is not ensured yet`);
    });
    this.ensureLoop = this.keepEnsuring();
    this.pollOutbox();
  }

  async beforeApplicationShutdown() {
    this.stopping = true;
    if (this.viewTimer) clearTimeout(this.viewTimer);
    // Publishes still waiting answer Unavailable now: their events stay queued for the relay.
    for (const w of this.waiters) w.settle(false);
    await Promise.all(
      [this.ensureLoop, this.draining, this.relaying].map((p) => p?.catch(() => undefined) ?? Promise.resolve()),
    );
  }

  /** Retries creating the stream until it exists (NATS may come up after the registry). */
  private async keepEnsuring(): Promise<void> {
    for (let attempt = 0; !this.stopping && !this.ensured; attempt++) {
      try {
        await this.ensureStream();
      } catch (e) {
        if (attempt % 10 === 0)
          this.logger.event('warn', 'event stream not ensured yet, retrying', {
            stream: this.streamName,
            error: (e as Error).message,
          });
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

  // ---- the view of the outbox -------------------------------------------------------------

  private pollOutbox() {
    if (this.stopping) return;
    this.viewTimer = setTimeout(() => {
      void this.readOutbox()
        .catch(() => undefined)
        .finally(() => this.pollOutbox());
    }, OUTBOX_POLL_MS);
    this.viewTimer.unref();
  }

  /** Reads whether the outbox holds events (and keeps it as the view). */
  private async readOutbox(): Promise<boolean> {
    const sentAt = performance.now();
    const parked = await this.outbox.holdsEvents();
    this.see(sentAt, parked);
    return parked;
  }

  /** Takes a reading sent at `sentAt`, unless a later one is known already. */
  private see(sentAt: number, parked: boolean) {
    if (sentAt >= this.view.sentAt) this.view = { sentAt, parked };
  }

  /** Whether the outbox holds events: the view when recent enough, else asked. */
  private outboxHolds(): boolean | Promise<boolean> {
    if (performance.now() - this.view.sentAt < OUTBOX_VIEW_MS) return this.view.parked;
    // Redis unreachable: nothing could be parked (nor queued) now either; the stream is the only way.
    return this.readOutbox().catch(() => false);
  }

  // ---- publishing -------------------------------------------------------------------------

  /** The JetStream publish of one event: on its type's subject, its id as `Nats-Msg-Id`. */
  private publishRequest(event: DomainEvent): RawRequest {
    // Buffer.from takes small strings from Node's pool: cheaper than a TextEncoder.
    return {
      subject: eventSubject(this.config.natsNamespace, event.event.type),
      data: Buffer.from(JSON.stringify(event)),
      headers: singleHeader('Nats-Msg-Id', event.event.id),
    };
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
    checkAck(
      (
        await this.nats.requestRaw(nc, r.subject, r.data, {
          timeoutMs: Math.max(50, Math.round(timeoutMs)),
          headers: r.headers,
        })
      ).data,
    );
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
   * Publishes the events of one operation and waits for every acknowledgement. While the outbox
   * holds events, they are queued behind those (see `publishBehind`). Otherwise the first attempt
   * sends them all at once, in order (one request batch, one timer: the stream keeps their order);
   * an event that failed is retried on its own with backoff (a retry may then land after a later
   * event). On failure, parks the unacknowledged ones for the relay and throws Unavailable.
   */
  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const holds = this.outboxHolds();
    if (typeof holds === 'boolean' ? holds : await holds) return this.publishBehind(events);
    return this.publishDirect(events);
  }

  private async publishDirect(events: DomainEvent[]): Promise<void> {
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
      (retries ??= Array.from({ length: events.length }, () => Promise.resolve()))[i] = this.publishWithRetry(
        events[i]!,
        deadline,
        error,
      );
    }
    if (!retries) return;
    const outcomes = await Promise.allSettled(retries);
    const failed = events.filter((_, i) => outcomes[i]!.status === 'rejected');
    if (failed.length === 0) return;
    const reason = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as Error;
    let parkedAt: number;
    try {
      await this.enqueue(failed);
      parkedAt = performance.now();
      this.logger.event('error', 'event stream unavailable: events parked for relay', {
        count: failed.length,
        ids: failed.map((e) => e.event.id),
        error: reason?.message,
      });
    } catch (parkError) {
      // Lost unless the operation journaled its change (events/journal.ts): then they are rebuilt later.
      this.logger.event('error', 'event stream unavailable and events could not be parked', {
        ids: failed.map((e) => e.event.id),
        error: reason?.message,
        parkError: (parkError as Error).message,
      });
      throw unavailable();
    }
    await untilVisible(parkedAt);
    throw new EventsParked();
  }

  /**
   * The outbox holds events: these are queued behind them, and this replica relays the outbox
   * (or waits while another does) until they are stored, or answers Unavailable at the deadline
   * with them queued (late, not lost).
   */
  private async publishBehind(events: DomainEvent[]): Promise<void> {
    const deadline = performance.now() + this.config.eventPublishTimeoutMs;
    let target: number;
    let parkedAt: number;
    try {
      target = await this.enqueue(events);
      parkedAt = performance.now();
    } catch {
      // Redis refused them (it just answered the view): the stream is the only way left.
      return this.publishDirect(events);
    }
    if (await this.relayedBy(target, deadline)) return;
    this.logger.event('error', 'event stream unavailable: events queued behind parked events', {
      count: events.length,
      ids: events.map((e) => e.event.id),
    });
    await untilVisible(parkedAt);
    throw new EventsParked();
  }

  /** Appends events to the outbox; answers the head counter's value once they are relayed. */
  private async enqueue(events: DomainEvent[]): Promise<number> {
    const target = await this.outbox.append(events.map((e) => JSON.stringify(e)));
    // This replica's own publishes see them at once; the others within OUTBOX_POLL_MS.
    this.see(performance.now(), true);
    return target;
  }

  // ---- relaying ---------------------------------------------------------------------------

  /** Resolves true once the head counter reaches `target`, false at `deadline` (performance.now()). */
  private relayedBy(target: number, deadline: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const w: Waiter = {
        target,
        settle: (relayed) => {
          if (!this.waiters.delete(w)) return;
          clearTimeout(w.timer);
          resolve(relayed);
        },
      };
      this.waiters.add(w);
      w.timer = setTimeout(() => w.settle(false), Math.max(0, deadline - performance.now()));
      this.drain();
    });
  }

  /** Settles the waiters whose events are out of the outbox. */
  private reached(head: number) {
    for (const w of this.waiters) if (w.target <= head) w.settle(true);
  }

  /**
   * Relays while publishes of this replica wait: itself when it gets the lock, else watching another replica's
   * progress.
   */
  private drain() {
    if (this.draining || this.stopping) return;
    this.draining = (async () => {
      let pause = 10;
      while (this.waiters.size > 0 && !this.stopping) {
        const relayed = await this.relayOutbox().catch(() => 0);
        if (this.waiters.size === 0) break;
        try {
          this.reached(await this.outbox.departedCount());
        } catch {
          // Redis unreachable: the waiters answer Unavailable at their deadlines.
        }
        if (this.waiters.size === 0) break;
        if (relayed > 0) pause = 10;
        else {
          await sleep(pause);
          pause = Math.min(pause * 2, 100);
        }
      }
    })().finally(() => {
      this.draining = undefined;
      if (this.waiters.size > 0) this.drain();
    });
  }

  /**
   * Relays parked events, oldest first, if no other replica is relaying; returns how many reached
   * the stream. Stops at the first event the stream does not take (the rest wait, in order), when
   * the outbox is empty, or after RELAY_MAX_BATCHES batches. One run at a time per replica.
   */
  relayOutbox(): Promise<number> {
    this.relaying ??= this.relayUnderLock().finally(() => {
      this.relaying = undefined;
    });
    return this.relaying;
  }

  private async relayUnderLock(): Promise<number> {
    if (!(await this.outbox.takeRelayLock(this.owner, RELAY_LOCK_MS))) return 0;
    let relayed = 0;
    try {
      for (let n = 0; n < RELAY_MAX_BATCHES && !this.stopping; n++) {
        const readAt = performance.now();
        const items = await this.outbox.oldest(RELAY_BATCH);
        if (items.length === 0) {
          this.see(readAt, false);
          break;
        }
        const batch = await this.relayBatch(items);
        relayed += batch.stored;
        if (batch.removable.length > 0) {
          const popAt = performance.now();
          const { departed, left } = await this.outbox.remove(batch.removable);
          this.reached(departed);
          if (left === 0) this.see(popAt, false);
        }
        // Still unavailable: the rest waits, in order, for the next run.
        if (batch.removable.length < items.length) break;
        if (!(await this.outbox.renewRelayLock(this.owner, RELAY_LOCK_MS))) break;
      }
    } finally {
      await this.outbox.releaseRelayLock(this.owner).catch(() => undefined);
    }
    if (relayed) this.logger.event('info', 'relayed parked events', { count: relayed });
    return relayed;
  }

  /**
   * Publishes one batch of parked events at once, in outbox order (the stream keeps the order of
   * one connection's publishes). Answers the leading events that may leave the outbox, as (kind,
   * event) pairs: stored (`s`, also when the stream found it a duplicate), unreadable (`s`), or
   * refused for good (`r`, set aside); the first other failure ends them.
   */
  private async relayBatch(items: string[]): Promise<{ removable: Departure[]; stored: number }> {
    const events = items.map((item): DomainEvent | undefined => {
      try {
        return JSON.parse(item) as DomainEvent;
      } catch {
        return undefined;
      }
    });
    const readable = events.filter((e): e is DomainEvent => e !== undefined);
    let outcomes: Array<PromiseSettledResult<ReplyMsg>>;
    try {
      const timeoutMs = Math.max(50, Math.min(RELAY_TIMEOUT_MS, Math.floor(this.config.eventPublishTimeoutMs / 2)));
      const nc = await withTimeout(this.nats.connection$(), timeoutMs, 'NATS is not connected');
      outcomes = await this.nats.requestRawMany(
        nc,
        readable.map((e) => this.publishRequest(e)),
        { timeoutMs },
      );
    } catch (e) {
      outcomes = readable.map((): PromiseRejectedResult => ({ status: 'rejected', reason: e }));
    }
    const removable: Departure[] = [];
    let stored = 0;
    let k = 0;
    for (let i = 0; i < items.length; i++) {
      const event = events[i];
      if (!event) {
        this.logger.event('error', 'unreadable parked event dropped', { item: items[i]!.slice(0, 200) });
        removable.push(['s', items[i]!]);
        continue;
      }
      const o = outcomes[k++]!;
      let error: unknown;
      if (o.status === 'rejected') error = o.reason;
      else {
        try {
          checkAck(o.value.data);
          removable.push(['s', items[i]!]);
          stored++;
          continue;
        } catch (e) {
          error = e;
        }
      }
      if (!refusedForGood(error)) break;
      this.logger.event('error', 'the event stream refuses a parked event for good: set aside, not delivered', {
        id: event.event.id,
        type: event.event.type,
        key: this.refusedKey,
        error: (error as Error).message,
      });
      removable.push(['r', items[i]!]);
    }
    return { removable, stored };
  }
}

/** Waits until every replica's view of the outbox shows events parked at `parkedAt` (performance.now()). */
function untilVisible(parkedAt: number): Promise<void> {
  return sleep(parkedAt + OUTBOX_VIEW_MS - performance.now());
}
