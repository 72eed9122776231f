import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { DataSource, type EntityManager } from 'typeorm';
import type { RecordingServiceConfig } from '../config.js';
import { EventBus } from './event-bus.js';

const OUTBOX = 'recording.outbox';
/** Events one relay transaction takes (and holds locked while it publishes them). */
const BATCH = 100;
/** How long shutdown waits for a relay round in progress (its publishes time out on their own). */
const SHUTDOWN_WAIT_MS = 5000;

/**
 * The transactional outbox of the service's own events. `add` writes events in the caller's
 * transaction, so an event exists exactly when the state change it announces committed. The relay
 * publishes them to JetStream with Nats-Msg-Id = event id and deletes each one JetStream
 * acknowledged; what is left (NATS down, a crash between publish and delete) is relayed again on
 * start-up, after every commit that added events and every RECORDINGS_OUTBOX_RELAY_INTERVAL_MS.
 * A publish repeated after a crash carries the same id, so JetStream drops the duplicate (within
 * its duplicate window). Replicas relay side by side: each batch is taken with
 * `FOR UPDATE SKIP LOCKED`, so no two replicas publish the same row at once.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly ds: DataSource,
    private readonly bus: EventBus,
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
  ) {}

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
      [events.map((e) => e.event.id), events.map((e) => e.event.type), events.map((e) => JSON.stringify(e)), Date.now()],
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
        (e) => this.logger.event('warn', 'relaying the event outbox failed; it is retried', { error: (e as Error).message }),
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
    for (;;) {
      const { published, complete } = await this.relayBatch();
      total += published;
      if (complete || this.stopped) return total;
    }
  }

  /** One batch in one transaction: publish in order, delete what JetStream acknowledged, stop at the first failure. */
  private async relayBatch(): Promise<{ published: number; complete: boolean }> {
    return this.ds.transaction(async (m) => {
      const rows = (await m.query(`SELECT seq, payload FROM ${OUTBOX} ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`)) as Array<{ seq: string; payload: DomainEvent }>;
      const acknowledged: string[] = [];
      let failure: Error | undefined;
      for (const row of rows) {
        try {
          await this.bus.publish([row.payload]);
          acknowledged.push(row.seq);
        } catch (e) {
          failure = e as Error;
          break;
        }
      }
      if (acknowledged.length > 0) await m.query(`DELETE FROM ${OUTBOX} WHERE seq = ANY($1::bigint[])`, [acknowledged]);
      if (failure) {
        this.logger.event('warn', 'an outbox event could not be published yet; it stays for the next round', { published: acknowledged.length, waiting: rows.length - acknowledged.length, error: failure.message });
        return { published: acknowledged.length, complete: true };
      }
      return { published: acknowledged.length, complete: rows.length < BATCH };
    });
  }
}
