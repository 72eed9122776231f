import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { ClientEndedFact, ConnectionFact, ConnectionKey, MessageFact, UsageFact } from './event-reader.js';
import {
  contributionDelta,
  floorHour,
  mergeSpan,
  sameSpan,
  type ConnectionSpan,
  type MinutesDelta,
} from './hour-split.js';

/** What applying one event did. */
export type ApplyOutcome = 'applied' | 'duplicate' | 'no-op';

/** Rows one pruning pass deleted. */
export interface PruneOutcome {
  processedEvents: number;
  connections: number;
}

/** Rows deleted per statement, so a large backlog never holds locks for long. */
const PRUNE_BATCH = 5000;

interface ConnectionRow {
  application_id: string;
  channel_id: string;
  user_id: string;
  device_id: string;
  client_id: string;
  connection_id: string;
  organization_id: string;
  connected_at: string | null;
  ended_at: string | null;
  max_pixel_count: string;
}

const KEY_COLUMNS = 'application_id, channel_id, user_id, device_id, client_id, connection_id';

function spanOf(row: ConnectionRow): ConnectionSpan {
  return {
    connectedAt: row.connected_at === null ? null : Number(row.connected_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    maxPixelCount: Number(row.max_pixel_count),
  };
}

function keyParams(k: ConnectionKey): string[] {
  return [k.applicationId, k.channelId, k.userId, k.deviceId, k.clientId, k.connectionId];
}

/**
 * Writes usage facts to PostgreSQL. Each event is one transaction: its id goes into
 * `processed_event` first (a second delivery finds it and changes nothing), then the connection
 * row and the hourly rows change together. Rows are locked in a fixed order (connection rows by
 * key, hourly rows by hour and bucket) so concurrent replicas wait for each other instead of
 * deadlocking.
 */
@Injectable()
export class UsageLedger {
  constructor(private readonly ds: DataSource) {}

  async apply(fact: UsageFact, now = Date.now()): Promise<ApplyOutcome> {
    if (fact.kind === 'ignored' || fact.kind === 'invalid') return 'no-op';
    if (fact.kind === 'connection' && (await this.isNoOp(fact))) return 'no-op';
    return this.ds.transaction(async (m) => {
      const fresh = (await m.query(
        `INSERT INTO usage.processed_event (event_id, processed_on) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
        [fact.eventId, now],
      )) as unknown[];
      if (fresh.length === 0) return 'duplicate';
      switch (fact.kind) {
        case 'connection':
          await this.applyConnection(m, fact, now);
          break;
        case 'client-ended':
          await this.applyClientEnded(m, fact, now);
          break;
        case 'message':
          await this.applyMessage(m, fact);
          break;
      }
      return 'applied';
    });
  }

  /**
   * A frame-size report that does not raise the connection's maximum changes nothing, now or
   * later (the maximum only grows): it is skipped without a transaction or a processed_event row.
   */
  private async isNoOp(fact: ConnectionFact): Promise<boolean> {
    if (fact.connectedAt !== undefined || fact.endedAt !== undefined) return false;
    const rows = (await this.ds.query(
      `SELECT max_pixel_count FROM usage.connection WHERE (${KEY_COLUMNS}) = ($1, $2, $3, $4, $5, $6)`,
      keyParams(fact.connection),
    )) as Array<{ max_pixel_count: string }>;
    return rows.length > 0 && Number(rows[0]!.max_pixel_count) >= (fact.maxPixelCount ?? 0);
  }

  private async applyConnection(m: EntityManager, fact: ConnectionFact, now: number): Promise<void> {
    const key = keyParams(fact.connection);
    await m.query(
      `INSERT INTO usage.connection (${KEY_COLUMNS}, organization_id, connected_at, ended_at, max_pixel_count, modified_on)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL, 0, $8) ON CONFLICT DO NOTHING`,
      [...key, fact.organizationId, now],
    );
    const rows = (await m.query(
      `SELECT * FROM usage.connection WHERE (${KEY_COLUMNS}) = ($1, $2, $3, $4, $5, $6) FOR UPDATE`,
      key,
    )) as ConnectionRow[];
    const row = rows[0]!;
    const seen: Partial<ConnectionSpan> = {};
    if (fact.connectedAt !== undefined) seen.connectedAt = fact.connectedAt;
    if (fact.endedAt !== undefined) seen.endedAt = fact.endedAt;
    if (fact.maxPixelCount !== undefined) seen.maxPixelCount = fact.maxPixelCount;
    await this.moveConnection(m, row, mergeSpan(spanOf(row), seen), now);
  }

  /** The client left the channel (or unregistered): its connections there end at that moment at the latest. */
  private async applyClientEnded(m: EntityManager, fact: ClientEndedFact, now: number): Promise<void> {
    const rows = (await m.query(
      `SELECT * FROM usage.connection
        WHERE application_id = $1 AND user_id = $2 AND device_id = $3 AND client_id = $4
          AND ($5::text IS NULL OR channel_id = $5)
          AND (ended_at IS NULL OR ended_at > $6) AND (connected_at IS NULL OR connected_at <= $6)
        ORDER BY ${KEY_COLUMNS}
        FOR UPDATE`,
      [fact.applicationId, fact.userId, fact.deviceId, fact.clientId, fact.channelId, fact.at],
    )) as ConnectionRow[];
    for (const row of rows) await this.moveConnection(m, row, mergeSpan(spanOf(row), { endedAt: fact.at }), now);
  }

  private async moveConnection(
    m: EntityManager,
    row: ConnectionRow,
    after: ConnectionSpan,
    now: number,
  ): Promise<void> {
    const before = spanOf(row);
    if (sameSpan(before, after)) return;
    await m.query(
      `UPDATE usage.connection SET connected_at = $7, ended_at = $8, max_pixel_count = $9, modified_on = $10
        WHERE (${KEY_COLUMNS}) = ($1, $2, $3, $4, $5, $6)`,
      [
        row.application_id,
        row.channel_id,
        row.user_id,
        row.device_id,
        row.client_id,
        row.connection_id,
        after.connectedAt,
        after.endedAt,
        after.maxPixelCount,
        now,
      ],
    );
    await this.book(m, row.application_id, row.organization_id, contributionDelta(before, after));
  }

  private async book(
    m: EntityManager,
    applicationId: string,
    organizationId: string,
    deltas: MinutesDelta[],
  ): Promise<void> {
    if (deltas.length === 0) return;
    await m.query(
      `INSERT INTO usage.hourly_minutes (application_id, organization_id, hour_start, max_pixel_count, participant_ms)
       SELECT $1, $2, d.hour_start, d.max_pixel_count, d.ms
         FROM unnest($3::bigint[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS d(hour_start, max_pixel_count, ms, n)
        ORDER BY d.n
       ON CONFLICT (application_id, organization_id, hour_start, max_pixel_count)
       DO UPDATE SET participant_ms = usage.hourly_minutes.participant_ms + EXCLUDED.participant_ms`,
      [
        applicationId,
        organizationId,
        deltas.map((d) => String(d.hourStart)),
        deltas.map((d) => String(d.maxPixelCount)),
        deltas.map((d) => String(d.ms)),
      ],
    );
  }

  private async applyMessage(m: EntityManager, fact: MessageFact): Promise<void> {
    await m.query(
      `INSERT INTO usage.hourly_messages (application_id, organization_id, hour_start, participant_messages) VALUES ($1, $2, $3, 1)
       ON CONFLICT (application_id, organization_id, hour_start) DO UPDATE SET participant_messages = usage.hourly_messages.participant_messages + 1`,
      [fact.applicationId, fact.organizationId, floorHour(fact.at)],
    );
  }

  /**
   * Deletes what is older than `cutoff` (Unix ms) and can no longer matter: processed event ids
   * (the caller picks a cutoff the event stream cannot redeliver from), and connection rows that
   * are settled (ended, or never connected: they book nothing) and unchanged since. Open
   * connections stay whatever their age: they still count and can still end. Hourly rows stay.
   */
  async prune(cutoff: number): Promise<PruneOutcome> {
    const processedEvents = await this.deleteInBatches(
      `DELETE FROM usage.processed_event WHERE event_id IN (SELECT event_id FROM usage.processed_event WHERE processed_on < $1 LIMIT ${PRUNE_BATCH})`,
      cutoff,
    );
    const connections = await this.deleteInBatches(
      `DELETE FROM usage.connection WHERE ctid IN (
         SELECT ctid FROM usage.connection
          WHERE (ended_at IS NOT NULL OR connected_at IS NULL) AND modified_on < $1 AND COALESCE(ended_at, 0) < $1
          LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED)`,
      cutoff,
    );
    return { processedEvents, connections };
  }

  private async deleteInBatches(sql: string, cutoff: number): Promise<number> {
    let total = 0;
    for (;;) {
      // TypeORM answers a DELETE with [rows, affected].
      const [, affected] = (await this.ds.query(sql, [cutoff])) as [unknown[], number];
      total += affected;
      if (affected < PRUNE_BATCH) return total;
    }
  }
}
