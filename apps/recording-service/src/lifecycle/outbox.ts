import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { changeSubject, RECORDING_CHANGE_OWNER, type ChangeNotice, type DomainEvent } from '@switchboard/contracts';
import { ensureChangeStream, JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { DataSource, type EntityManager } from 'typeorm';
import type { RecordingServiceConfig } from '../config.js';
import { EventBus } from './event-bus.js';

const OUTBOX = 'recording.outbox';
const CHANGE_OUTBOX = 'recording.change_outbox';
const encoder = new TextEncoder();

/** One outbox table and where its rows go. */
interface Lane {
  table: string;
  what: string;
  publish(payload: unknown): Promise<void>;
}
/** Events one relay transaction takes (and holds locked while it publishes them). */
const BATCH = 100;
/** How long shutdown waits for a relay round in progress (its publishes time out on their own). */
const SHUTDOWN_WAIT_MS = 5000;

/**
 * The transactional outbox of the service's own events and change notices (README "Outbox"):
 * `add` and `addChanges` write in the caller's transaction, so a row exists exactly when the change
 * it announces committed; the relay publishes with Nats-Msg-Id = row id and deletes what JetStream
 * acknowledged, batches taken `FOR UPDATE SKIP LOCKED` so replicas relay side by side.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private changeStreamReady = false;
  private readonly lanes: Lane[];

  constructor(
    private readonly ds: DataSource,
    private readonly bus: EventBus,
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
  ) {
    this.lanes = [
      { table: OUTBOX, what: 'event', publish: (payload) => this.bus.publish([payload as DomainEvent]) },
      {
        table: CHANGE_OUTBOX,
        what: 'change notice',
        publish: (payload) => this.publishChange(payload as ChangeNotice),
      },
    ];
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), this.config.recordingsOutboxRelayIntervalMs);
    this.timer.unref();
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, SHUTDOWN_WAIT_MS).unref())]);
  }

  /** Adds events in the caller's transaction (an id already waiting is not added twice). */
  async add(m: EntityManager, events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    await m.query(
      `INSERT INTO ${OUTBOX} (event_id, event_type, payload, created_on)
       SELECT e.id, e.type, e.payload, $4 FROM unnest($1::text[], $2::text[], $3::jsonb[]) WITH ORDINALITY AS e(id, type, payload, n) ORDER BY e.n
       ON CONFLICT (event_id) DO NOTHING`,
      [
        events.map((e) => e.event.id),
        events.map((e) => e.event.type),
        events.map((e) => JSON.stringify(e)),
        Date.now(),
      ],
    );
  }

  /** Adds change notices in the caller's transaction (a notice id already waiting is not added twice). */
  async addChanges(m: EntityManager, notices: ChangeNotice[]): Promise<void> {
    if (notices.length === 0) return;
    await m.query(
      `INSERT INTO ${CHANGE_OUTBOX} (notice_id, payload, created_on)
       SELECT n.id, n.payload, $3 FROM unnest($1::uuid[], $2::jsonb[]) WITH ORDINALITY AS n(id, payload, k) ORDER BY n.k
       ON CONFLICT (notice_id) DO NOTHING`,
      [notices.map((n) => n.id), notices.map((n) => JSON.stringify(n)), Date.now()],
    );
  }

  /** Starts a relay round now (after a commit that added events); coalesces with one in progress. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.relayAll()
      .then(
        () => undefined,
        (e) =>
          this.logger.event('warn', 'relaying the event outbox failed; it is retried', { error: (e as Error).message }),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Relays until the outbox is empty (of rows no other replica holds) or a publish fails. */
  async relayAll(): Promise<number> {
    // Before the first connection no row is taken: a transaction never waits for NATS to come up.
    await this.nats.connection$();
    let total = 0;
    for (const lane of this.lanes) {
      for (;;) {
        const { published, complete } = await this.relayBatch(lane);
        total += published;
        if (this.stopped) return total;
        if (complete) break;
      }
    }
    return total;
  }

  /** Publishes one change notice (the stream is ensured before the first publish, and again after a failure). */
  private async publishChange(notice: ChangeNotice): Promise<void> {
    const nc = await this.nats.connection$();
    try {
      if (!this.changeStreamReady) {
        await ensureChangeStream(await jetstreamManager(nc), this.config.natsNamespace);
        this.changeStreamReady = true;
      }
      await jetstream(nc).publish(
        changeSubject(this.config.natsNamespace, RECORDING_CHANGE_OWNER),
        encoder.encode(JSON.stringify(notice)),
        { msgID: notice.id },
      );
    } catch (e) {
      this.changeStreamReady = false;
      throw e;
    }
  }

  /** One batch in one transaction: publish in order, delete what JetStream acknowledged, stop at the first failure. */
  private async relayBatch(lane: Lane): Promise<{ published: number; complete: boolean }> {
    return this.ds.transaction(async (m) => {
      const rows = (await m.query(
        `SELECT seq, payload FROM ${lane.table} ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      )) as Array<{ seq: string; payload: unknown }>;
      const acknowledged: string[] = [];
      let failure: Error | undefined;
      for (const row of rows) {
        try {
          await lane.publish(row.payload);
          acknowledged.push(row.seq);
        } catch (e) {
          failure = e as Error;
          break;
        }
      }
      if (acknowledged.length > 0)
        await m.query(`DELETE FROM ${lane.table} WHERE seq = ANY($1::bigint[])`, [acknowledged]);
      if (failure) {
        this.logger.event('warn', `an outbox ${lane.what} could not be published yet; it stays for the next round`, {
          published: acknowledged.length,
          waiting: rows.length - acknowledged.length,
          error: failure.message,
        });
        return { published: acknowledged.length, complete: true };
      }
      return { published: acknowledged.length, complete: rows.length < BATCH };
    });
  }
}
