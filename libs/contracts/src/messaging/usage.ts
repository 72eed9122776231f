/**
 * The usage contract: what usage-aggregator reads from the domain event stream, what it stores,
 * and the one request it answers.
 *
 * ## `usage-aggregator.v1.usage.list` (request/reply, queue group `usage-aggregator`)
 *
 * The interface B `Usage` list, sent by management-api (`GET /Usage`); subject and envelope are
 * `ManagementReadSubjects.usageList` / `UsageListRequest` of interface-b/management-messaging.ts.
 * Request  `{ scope, applicationId, startTimestamp|null, endTimestamp|null, query }`: Unix ms, the
 *          start inclusive, the end exclusive; a null start means from the beginning, a null end
 *          up to now; an empty window (start = end) answers no records; `query` holds the client's
 *          OData options verbatim.
 * Response `{ value: UsageRecord[], '@odata.count'? }`. With `$select` the records carry only the
 *          selected fields. Paging: `$top` defaults to 100 and is at most 1000; `$skip` pages further.
 *
 * **How the window maps to records.** Usage is kept per application per clock hour (UTC, aligned
 * to Unix epoch hours). The answer holds one `UsageRecord` per application per hour that has usage
 * (participant minutes or participant messages greater than zero) and that overlaps the window
 * `[startTimestamp, endTimestamp)`: hours without usage give no record. Each record covers its
 * whole hour: `startTimestamp` is the hour's start, `endTimestamp` the next hour's start (ISO 8601
 * date-time, UTC, millisecond precision). A window that does not start or end on an hour boundary
 * is widened to whole hours (the store has no finer grain). The sums of the records equal the
 * usage of the widened window exactly.
 * Records come ordered by `startTimestamp` ascending unless `$orderby` says otherwise; `id` is a
 * UUID derived from the application id and the hour, the same in every answer.
 *
 * **Participant minutes.** A connection counts from its `connection.connected` event to its
 * `connection.closed` or `connection.failed` event (or `channel.client.left` of its client in its
 * channel, or `client.unregistered` of its client, whichever comes first), by event timestamps.
 * A connection that fails before it is connected counts nothing. Its time is split across the
 * clock hours it spans, to the millisecond, and all of it is counted in the bucket of the
 * connection's **maximum pixel count**: the largest `width * height` seen over its whole life
 * (0 for audio-only connections and for video connections that never reported a frame size).
 * When a larger frame size shows up later (also after the close, if events arrive out of
 * order), the connection's minutes move to the new bucket.
 *
 * `participantMinutes` is one entry per bucket with minutes in that hour, sorted by key:
 * `{ key: maxPixelCount, value: { maxPixelCount, usageParticipantMinutes } }`.
 * Rounding: durations are stored as integer milliseconds and summed exactly as integers;
 * `usageParticipantMinutes` is that sum divided by 60000 once, when the record is answered
 * (the IEEE double nearest to the exact quotient; whole and half minutes are exact).
 *
 * **Open connections.** A connection that is connected and not yet ended is kept in PostgreSQL
 * with its connected-at time and current maximum pixel count. Queries include its time from
 * connected-at up to `min(now, end of the widened window)` in the bucket of its current maximum,
 * so the hour that holds "now" grows until the connection ends; when it ends, the whole
 * connection is booked into the hourly rows and the answer for past hours stays the same (unless
 * the connection's maximum pixel count changed since, see above).
 *
 * **Participant messages.** Each `channel.client.message` and `client.message` event counts one
 * message in the hour of its timestamp (messages the server or the API sends are not counted).
 *
 * **Video resolution.** The aggregator takes the pixel count of a connection event from its
 * connection part (the largest value found wins): `stats.frameWidth * frameHeight` (every
 * `connection.stats` event, and any other connection event whose producer attaches a stats
 * sample), `videoStream.width * height` (runtime-registry attaches the connection's video stream,
 * frame size included, to the connection part of its events) and each of
 * `videoStreams[].width * height` should a producer send them. Values that are not non-negative
 * integers (e.g. a null width before any frame size is known) are ignored.
 *
 * **Tenancy.** Usage rows carry the `organizationId` of the events that produced them. A scope
 * with an `organizationId` sees only that organization's usage (another organization's
 * application yields no records, exactly like an application without usage); an operator scope
 * without organization sees every organization's usage of the application (summed per hour).
 * A non-operator scope without organization is `Forbidden`.
 *
 * **Errors.** `ValidationFailed` for a malformed request (`endTimestamp` must not be before
 * `startTimestamp`; both within 0 ... 253402300799999, i.e. up to year 9999). A refused OData option
 * (unknown property, `$filter` that is not boolean, unsupported option such as `$expand`...) is
 * `ValidationFailed` with one detail `{ field: '<the option, e.g. $filter>', message:
 * '<OData code>: <message>' }`, the OData code being `QuerySyntaxError`, `QueryLimitExceeded`,
 * `UnknownProperty` or `ValidationFailed` (see `usageQueryErrorCode`).
 *
 * **OData model.** Filterable and sortable: `id` (guid), `applicationId` (string),
 * `startTimestamp`, `endTimestamp` (date-time; compared with date and date-time literals),
 * `participantMessages` (integer). `participantMinutes` is selectable only. `$expand` is not
 * supported (the record has no navigation properties).
 *
 * ## Consumption (JetStream)
 * Durable pull consumer `usage-aggregator` on the stream `eventStreamName(ns)`, filter
 * `<ns>.events.>` (events it does not use are acknowledged untouched), explicit acks after the
 * PostgreSQL transaction commits, processing idempotent by event id (the id is recorded in
 * `usage.processed_event` in the same transaction as the usage change), so a redelivered or
 * replayed event changes nothing.
 */

import { odataQueryErrorCodeOf } from '../problem/index.js';

/** Length of one usage bucket: a clock hour, in milliseconds. */
export const USAGE_BUCKET_MS = 3_600_000;

/** Largest timestamp a window may name: 9999-12-31T23:59:59.999Z. */
export const USAGE_MAX_TIMESTAMP = 253_402_300_799_999;

/** The event types usage-aggregator applies; every other event is acknowledged without effect. */
export const USAGE_EVENT_TYPES = [
  'connection.connected',
  'connection.updated',
  'connection.stats',
  'connection.closed',
  'connection.failed',
  'channel.client.left',
  'client.unregistered',
  'channel.client.message',
  'client.message',
] as const;
export type UsageEventType = (typeof USAGE_EVENT_TYPES)[number];

/** Prefix of the detail message of a refused OData option: `'<OData code>: <message>'`. */
export function usageQueryErrorCode(detailMessage: string): string | undefined {
  return odataQueryErrorCodeOf(detailMessage)?.code;
}
