import { Injectable } from '@nestjs/common';
import {
  DomainError,
  UsageListRequest,
  validator,
  type CallerScope,
  type ODataListResponse,
  type UsageParticipantMinutesEntry,
  type UsageRecord,
} from '@switchboard/contracts';
import {
  applyODataQuery,
  executeCount,
  parseForwardedQuery,
  projectRecord,
  selectModelRecords,
  withForwardedQueryErrors,
} from '@switchboard/odata';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import { ceilHour, floorHour, HOUR_MS } from './hour-split.js';
import { usageRecordModel } from './usage-record.model.js';

const ALIAS = 'u';
const MS_PER_MINUTE = 60_000;

/**
 * One row per application per hour of the window that has usage. Booked minutes come from
 * `hourly_minutes`; connections still open add their time from connected-at up to `until`
 * (min(now, end of the window)), split by hour, in the bucket of their current maximum.
 * Parameters: usage_app, usage_org (null: every organization), usage_from and usage_to (hour
 * boundaries), usage_until. Written with CAST, never `::`, because of TypeORM's `:name` parameters.
 */
const USAGE_RECORD_SQL = `
  WITH booked AS (
    SELECT m.application_id, m.hour_start, m.max_pixel_count, m.participant_ms
      FROM usage.hourly_minutes m
     WHERE m.application_id = :usage_app
       AND (CAST(:usage_org AS text) IS NULL OR m.organization_id = CAST(:usage_org AS text))
       AND m.hour_start >= CAST(:usage_from AS bigint) AND m.hour_start < CAST(:usage_to AS bigint)
  ),
  open_part AS (
    SELECT c.application_id, s.hour_start, c.max_pixel_count,
           LEAST(s.hour_start + ${HOUR_MS}, CAST(:usage_until AS bigint)) - GREATEST(s.hour_start, c.connected_at) AS participant_ms
      FROM usage.connection c
     CROSS JOIN LATERAL generate_series(
             GREATEST(c.connected_at - mod(c.connected_at, ${HOUR_MS}), CAST(:usage_from AS bigint)),
             CAST(:usage_until AS bigint) - 1,
             CAST(${HOUR_MS} AS bigint)) AS s(hour_start)
     WHERE c.application_id = :usage_app
       AND (CAST(:usage_org AS text) IS NULL OR c.organization_id = CAST(:usage_org AS text))
       AND c.ended_at IS NULL AND c.connected_at IS NOT NULL
       AND c.connected_at < CAST(:usage_until AS bigint)
  ),
  minutes AS (
    SELECT p.application_id, p.hour_start, p.max_pixel_count, SUM(p.participant_ms) AS ms
      FROM (SELECT * FROM booked UNION ALL SELECT * FROM open_part) AS p
     GROUP BY p.application_id, p.hour_start, p.max_pixel_count
    HAVING SUM(p.participant_ms) > 0
  ),
  messages AS (
    SELECT g.application_id, g.hour_start, SUM(g.participant_messages) AS messages
      FROM usage.hourly_messages g
     WHERE g.application_id = :usage_app
       AND (CAST(:usage_org AS text) IS NULL OR g.organization_id = CAST(:usage_org AS text))
       AND g.hour_start >= CAST(:usage_from AS bigint) AND g.hour_start < CAST(:usage_to AS bigint)
     GROUP BY g.application_id, g.hour_start
    HAVING SUM(g.participant_messages) > 0
  ),
  hours AS (
    SELECT application_id, hour_start FROM minutes
    UNION
    SELECT application_id, hour_start FROM messages
  )
  SELECT CAST(md5(h.application_id || '/' || CAST(h.hour_start AS text)) AS uuid) AS id,
         h.application_id,
         h.hour_start AS start_timestamp,
         h.hour_start + ${HOUR_MS} AS end_timestamp,
         COALESCE(g.messages, 0) AS participant_messages,
         COALESCE(
           (SELECT jsonb_agg(jsonb_build_array(m.max_pixel_count, m.ms) ORDER BY m.max_pixel_count)
              FROM minutes m WHERE m.application_id = h.application_id AND m.hour_start = h.hour_start),
           CAST('[]' AS jsonb)) AS participant_minutes
    FROM hours h
    LEFT JOIN messages g ON g.application_id = h.application_id AND g.hour_start = h.hour_start`;

const listRequest = validator(UsageListRequest);

/** A row's values by column name, or a usage record's by property name. */
type RowValues = Record<string, unknown>;
type Options = Record<string, string | number | boolean | undefined>;

interface UsageWindow {
  scope: CallerScope;
  applicationId: string;
  /** Unix ms, inclusive. */
  start: number;
  /** Unix ms, exclusive; not before `start` (equal: an empty window). */
  end: number;
}

/**
 * Answers the usage list (libs/contracts/src/messaging/usage.ts) under
 * `usage-aggregator.v1.usage.list`, management-api's `GET /Usage`.
 */
@Injectable()
export class UsageQueryService {
  constructor(private readonly ds: DataSource) {}

  /**
   * `{ value, @odata.count? }`; a null `startTimestamp` means from the beginning, a null
   * `endTimestamp` up to now, an empty window answers no records.
   */
  async list(body: unknown, now = Date.now()): Promise<ODataListResponse<Partial<UsageRecord>>> {
    const req = listRequest.parse(body);
    const start = req.startTimestamp ?? 0;
    const end = req.endTimestamp ?? Math.max(now, start);
    if (end < start) {
      throw new DomainError('ValidationFailed', 'endTimestamp must not be before startTimestamp.', [
        { field: 'endTimestamp', message: 'must not be before startTimestamp' },
      ]);
    }
    const answer = await this.records(
      { scope: req.scope, applicationId: req.applicationId, start, end },
      req.query,
      now,
    );
    return answer.count === undefined ? { value: answer.value } : { '@odata.count': answer.count, value: answer.value };
  }

  private async records(
    window: UsageWindow,
    options: Options,
    now: number,
  ): Promise<{ value: Array<Partial<UsageRecord>>; count?: number }> {
    const { organizationId, operator } = window.scope;
    if (organizationId === null && !operator)
      throw new DomainError('Forbidden', 'Usage belongs to an organization; the caller has none.');
    // Bound to the usage record; it has no navigation properties: any `$expand` name is UnknownProperty, `*` expands
    // nothing.
    const query = parseForwardedQuery(options, usageRecordModel);
    if (window.end <= window.start) return query.count ? { value: [], count: 0 } : { value: [] };

    const from = floorHour(window.start);
    const to = ceilHour(window.end);
    const qb = this.ds
      .createQueryBuilder()
      .addCommonTableExpression(USAGE_RECORD_SQL, 'usage_record')
      .from('usage_record', ALIAS)
      .setParameters({
        usage_app: window.applicationId,
        usage_org: organizationId,
        usage_from: String(from),
        usage_to: String(to),
        usage_until: String(Math.min(now, to)),
      }) as SelectQueryBuilder<RowValues>;
    const toRecord = selectModelRecords(qb, usageRecordModel, ALIAS);
    if (query.orderBy.length === 0) qb.addOrderBy(`"${ALIAS}"."start_timestamp"`, 'ASC');
    const { query: page, countQuery } = withForwardedQueryErrors(() =>
      applyODataQuery(qb, query, usageRecordModel, ALIAS),
    );
    const rows = (await page.getRawMany()) as RowValues[];
    const value = rows.map(
      (raw) => projectRecord(toUsageRecord(toRecord(raw)) as unknown as RowValues, query) as Partial<UsageRecord>,
    );
    if (!countQuery) return { value };
    return { value, count: await executeCount(countQuery) };
  }
}

function toUsageRecord(r: RowValues): UsageRecord {
  const buckets = Array.isArray(r.participantMinutes)
    ? (r.participantMinutes as Array<[number | string, number | string]>)
    : [];
  const participantMinutes: UsageParticipantMinutesEntry[] = buckets.map(([px, ms]) => ({
    key: Number(px),
    value: { maxPixelCount: Number(px), usageParticipantMinutes: Number(ms) / MS_PER_MINUTE },
  }));
  return {
    id: String(r.id),
    applicationId: String(r.applicationId),
    startTimestamp: new Date(Number(r.startTimestamp)).toISOString(),
    endTimestamp: new Date(Number(r.endTimestamp)).toISOString(),
    participantMessages: Number(r.participantMessages ?? 0),
    participantMinutes,
  };
}
