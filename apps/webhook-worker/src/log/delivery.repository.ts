import { Injectable } from '@nestjs/common';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EventInfo, WebhookSource } from '@switchboard/contracts';
import { DataSource, type EntityManager } from 'typeorm';
import type { PlannedDelivery, PlannedJob } from '../intake/delivery-planner.js';

export type DeliveryState = 'pending' | 'succeeded' | 'failed';

/** A delivery row as the reconciler and replays need it. */
export interface StoredDelivery {
  id: string;
  webhookId: string;
  webhookSource: WebhookSource;
  url: string;
  organizationId: string;
  applicationId: string;
  channelId: string | null;
  batch: boolean;
  reliable: boolean;
  events: EventInfo[];
  state: DeliveryState;
  attempts: number;
  replayOf: string | null;
  /** The BullMQ job of several deliveries it was queued in; null: a job of its own (id = delivery id). */
  jobId: string | null;
  createdOn: number;
}

/**
 * One logged attempt: what the attempt itself adds to the delivery. Its row of
 * `webhook.delivery_attempt` (the `/WebhookDeliveries` entity) also copies the webhook, owner and
 * event columns, which WRITE_ATTEMPTS takes from the delivery's row (a delivery's job carries the
 * same values: both are made from the delivery), so they are not sent with every attempt.
 */
export interface AttemptRow {
  id: string;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  success: boolean;
  final: boolean;
  durationMs: number;
  attemptedOn: number;
}

const DELIVERY_COLUMNS = `x(id uuid, webhook_id text, webhook_source text, url text, organization_id text, application_id text, channel_id text,
  batch boolean, reliable boolean, event_ids text[], event_types text[], events jsonb, replay_of uuid, job_id uuid, created_on bigint)`;

const INSERT_DELIVERIES = `INSERT INTO webhook.delivery
    (id, webhook_id, webhook_source, url, organization_id, application_id, channel_id, batch, reliable, event_ids, event_types, events, replay_of, job_id, state, attempts, created_on)
  SELECT id, webhook_id, webhook_source, url, organization_id, application_id, channel_id, batch, reliable, event_ids, event_types, events, replay_of, job_id, 'pending', 0, created_on
  FROM jsonb_to_recordset($1::jsonb) AS ${DELIVERY_COLUMNS}
  ON CONFLICT (id) DO NOTHING`;

const ATTEMPT_COLUMNS = `x(id uuid, delivery_id uuid, attempt integer, status_code integer, error text, success boolean, final boolean, duration_ms integer, attempted_on bigint)`;

/**
 * One statement (so one implicit transaction): log the attempts, with the webhook, owner and event
 * columns of their delivery, then move each delivery's attempt count and state forward (a
 * succeeded delivery never goes back). Attempts of a delivery that was pruned meanwhile are
 * dropped. The rows come as `json` (not `jsonb`): read once, field by field, instead of first
 * being built into a jsonb document.
 */
const WRITE_ATTEMPTS = `WITH x AS (SELECT * FROM json_to_recordset($1::json) AS ${ATTEMPT_COLUMNS}),
  ins AS (
    INSERT INTO webhook.delivery_attempt
      (id, delivery_id, webhook_id, webhook_source, organization_id, application_id, channel_id, event_id, event_type, event_ids, event_count,
       batch, url, attempt, status_code, error, success, final, duration_ms, attempted_on, replay_of)
    SELECT x.id, x.delivery_id, d.webhook_id, d.webhook_source, d.organization_id, d.application_id, d.channel_id, d.event_ids[1], d.event_types[1],
       d.event_ids, cardinality(d.event_ids), d.batch, d.url, x.attempt, x.status_code, x.error, x.success, x.final, x.duration_ms, x.attempted_on, d.replay_of
    FROM x JOIN webhook.delivery d ON d.id = x.delivery_id
    ON CONFLICT (id) DO NOTHING
  )
  UPDATE webhook.delivery d SET
    attempts = GREATEST(d.attempts, l.attempt),
    state = CASE WHEN d.state = 'succeeded' OR NOT l.final THEN d.state WHEN l.success THEN 'succeeded' ELSE 'failed' END,
    finished_on = CASE WHEN l.final THEN l.attempted_on + l.duration_ms ELSE d.finished_on END
  FROM (SELECT DISTINCT ON (delivery_id) delivery_id, attempt, final, success, attempted_on, duration_ms FROM x ORDER BY delivery_id, attempt DESC) l
  WHERE d.id = l.delivery_id`;

interface DeliveryDbRow {
  id: string;
  webhook_id: string;
  webhook_source: WebhookSource;
  url: string;
  organization_id: string;
  application_id: string;
  channel_id: string | null;
  batch: boolean;
  reliable: boolean;
  events: EventInfo[];
  state: DeliveryState;
  attempts: number;
  replay_of: string | null;
  job_id: string | null;
  created_on: string;
}

function fromDb(r: DeliveryDbRow): StoredDelivery {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    webhookSource: r.webhook_source,
    url: r.url,
    organizationId: r.organization_id,
    applicationId: r.application_id,
    channelId: r.channel_id,
    batch: r.batch,
    reliable: r.reliable,
    events: r.events,
    state: r.state,
    attempts: r.attempts,
    replayOf: r.replay_of,
    jobId: r.job_id,
    createdOn: Number(r.created_on),
  };
}

function deliveryRow(d: PlannedDelivery, createdOn: number, replayOf: string | null = null) {
  return {
    id: d.id,
    webhook_id: d.webhook.id,
    webhook_source: d.webhook.source,
    url: d.webhook.url,
    organization_id: d.organizationId,
    application_id: d.applicationId,
    channel_id: d.channelId,
    batch: d.webhook.batch,
    reliable: d.webhook.reliable,
    event_ids: d.events.map((e) => e.id),
    event_types: d.events.map((e) => e.type),
    events: d.events,
    replay_of: replayOf,
    job_id: d.jobId ?? null,
    created_on: createdOn,
  };
}

function attemptDbRow(a: AttemptRow) {
  return {
    id: a.id,
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    status_code: a.statusCode,
    error: a.error,
    success: a.success,
    final: a.final,
    duration_ms: a.durationMs,
    attempted_on: a.attemptedOn,
  };
}

/** Rows serialized per turn of the event loop by jsonArray. */
const JSON_SLICE = 250;

/**
 * `JSON.stringify(items.map(row))`, built a slice at a time with a turn of the event loop in
 * between: an intake group's deliveries carry their payloads (about a megabyte for 2,000 events),
 * and one synchronous step that long holds back every answer and commit waiting to be handled.
 */
export async function jsonArray<T>(items: readonly T[], row: (item: T) => unknown): Promise<string> {
  if (items.length <= JSON_SLICE) return JSON.stringify(items.map(row));
  const parts: string[] = [];
  for (let i = 0; i < items.length; i += JSON_SLICE) {
    if (i > 0) await nextTurn();
    parts.push(JSON.stringify(items.slice(i, i + JSON_SLICE).map(row)).slice(1, -1));
  }
  return `[${parts.join(',')}]`;
}

/** What an intake transaction wrote: the events not processed before, and the jobs of their deliveries. */
export interface IntakeCommit {
  fresh: Set<string>;
  jobs: PlannedJob[];
}

/** An intake transaction that failed in a way that may have committed it all the same (see commitIntake). */
export class UncertainIntake extends Error {
  constructor(
    readonly xid: string,
    readonly written: IntakeCommit,
    override readonly cause: unknown,
  ) {
    super(`intake transaction ${xid} may or may not have committed: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

/** SQL of the `webhook` schema (the repository is the seam unit tests replace). */
@Injectable()
export class DeliveryRepository {
  constructor(readonly ds: DataSource) {}

  /**
   * The intake transaction: records the event ids as processed and, for the ids not processed
   * before (`fresh`), writes the deliveries `plan` makes. Either both happen or neither, so an
   * event is planned exactly once however often JetStream hands it over (two replicas holding the
   * same redelivered event serialize on the `processed_event` key). Ids are inserted sorted, so
   * concurrent intakes lock in the same order.
   *
   * When it fails after the transaction got its id, PostgreSQL may have committed it all the same
   * (the connection went during the COMMIT): the error is an UncertainIntake that carries what the
   * transaction wrote, its outcome to be looked up (`intakeStatus`) once PostgreSQL answers again.
   */
  async commitIntake(
    eventIds: readonly string[],
    plan: (fresh: ReadonlySet<string>) => PlannedJob[],
    now: number,
  ): Promise<IntakeCommit> {
    const sorted = [...new Set(eventIds)].sort();
    let written: { xid: string; commit: IntakeCommit } | undefined;
    try {
      return await this.ds.transaction(async (m: EntityManager) => {
        const rows = (await m.query(
          `WITH ins AS (INSERT INTO webhook.processed_event (event_id, processed_on) SELECT unnest($1::text[]), $2 ON CONFLICT (event_id) DO NOTHING RETURNING event_id)
           SELECT event_id, (SELECT pg_current_xact_id()::text) AS xid FROM ins`,
          [sorted, now],
        )) as Array<{ event_id: string; xid: string }>;
        const fresh = new Set(rows.map((r) => r.event_id));
        const jobs = fresh.size > 0 ? plan(fresh) : [];
        const deliveries = jobs.flatMap((j) => j.deliveries);
        if (deliveries.length > 0) {
          written = { xid: rows[0]!.xid, commit: { fresh, jobs } };
          await m.query(INSERT_DELIVERIES, [await jsonArray(deliveries, (d) => deliveryRow(d, now))]);
        }
        return { fresh, jobs };
      });
    } catch (e) {
      if (written) throw new UncertainIntake(written.xid, written.commit, e);
      throw e;
    }
  }

  /**
   * What became of the transaction of an UncertainIntake. `in progress`: the server has not yet
   * noticed its connection is gone. Anything else PostgreSQL no longer knows counts as aborted:
   * committing again is always safe (the events found processed then are left to the reconciler).
   */
  async intakeStatus(uncertain: UncertainIntake): Promise<'committed' | 'aborted' | 'in progress'> {
    const [row] = (await this.ds.query(`SELECT pg_xact_status($1::xid8) AS status`, [uncertain.xid])) as Array<{
      status: string | null;
    }>;
    return row?.status === 'committed' || row?.status === 'in progress' ? row.status : 'aborted';
  }

  /** Writes a new delivery (a replay). */
  async insertDelivery(d: PlannedDelivery, createdOn: number, replayOf: string | null): Promise<void> {
    await this.ds.query(INSERT_DELIVERIES, [JSON.stringify([deliveryRow(d, createdOn, replayOf)])]);
  }

  async writeAttempts(rows: readonly AttemptRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.ds.query(WRITE_ATTEMPTS, [JSON.stringify(rows.map(attemptDbRow))]);
  }

  /** Which of `ids` are still pending, with the attempts logged for each so far. */
  async pendingAttempts(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.ds.query(
      `SELECT id, attempts FROM webhook.delivery WHERE id = ANY($1::uuid[]) AND state = 'pending'`,
      [ids],
    )) as Array<{ id: string; attempts: number }>;
    return new Map(rows.map((r) => [r.id, r.attempts]));
  }

  /** Which of `ids` are still pending. */
  async stillPending(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = (await this.ds.query(
      `SELECT id FROM webhook.delivery WHERE id = ANY($1::uuid[]) AND state = 'pending'`,
      [ids],
    )) as Array<{ id: string }>;
    return new Set(rows.map((r) => r.id));
  }

  /** Pending deliveries created before `createdBefore`, after the cursor, oldest first. */
  async pending(
    createdBefore: number,
    after: { createdOn: number; id: string } | null,
    limit: number,
  ): Promise<StoredDelivery[]> {
    const rows = (await this.ds.query(
      `SELECT * FROM webhook.delivery
       WHERE state = 'pending' AND created_on < $1 AND (created_on, id) > ($2, $3::uuid)
       ORDER BY created_on, id LIMIT $4`,
      [createdBefore, after?.createdOn ?? -1, after?.id ?? '00000000-0000-0000-0000-000000000000', limit],
    )) as DeliveryDbRow[];
    return rows.map(fromDb);
  }

  /** The delivery an attempt belongs to, with the organization of the attempt. */
  async deliveryOfAttempt(attemptId: string): Promise<StoredDelivery | null> {
    const rows = (await this.ds.query(
      `SELECT d.* FROM webhook.delivery_attempt a JOIN webhook.delivery d ON d.id = a.delivery_id WHERE a.id = $1`,
      [attemptId],
    )) as DeliveryDbRow[];
    return rows[0] ? fromDb(rows[0]) : null;
  }

  /** Deletes deliveries with their attempts (one statement) and processed event ids older than `before`, in chunks. */
  async prune(before: number, chunk = 5000): Promise<{ deliveries: number; events: number }> {
    let deliveries = 0;
    let events = 0;
    for (;;) {
      const rows = (await this.ds.query(
        `WITH gone AS (DELETE FROM webhook.delivery WHERE id IN (SELECT id FROM webhook.delivery WHERE created_on < $1 LIMIT $2) RETURNING id),
           attempts AS (DELETE FROM webhook.delivery_attempt WHERE delivery_id IN (SELECT id FROM gone))
         SELECT count(*)::int AS n FROM gone`,
        [before, chunk],
      )) as Array<{ n: number }>;
      const n = rows[0]?.n ?? 0;
      deliveries += n;
      if (n < chunk) break;
    }
    for (;;) {
      const [, n] = (await this.ds.query(
        `DELETE FROM webhook.processed_event WHERE event_id IN (SELECT event_id FROM webhook.processed_event WHERE processed_on < $1 LIMIT $2)`,
        [before, chunk],
      )) as [unknown, number];
      events += n;
      if (n < chunk) break;
    }
    return { deliveries, events };
  }
}
