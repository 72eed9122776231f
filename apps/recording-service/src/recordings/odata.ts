import type { ODataOptions } from '@switchboard/contracts';
import {
  applyODataQuery,
  defineEntityModel,
  executeCount,
  parseForwardedQuery,
  projectRecord,
  withForwardedQueryErrors,
  type EntityModel,
  type ODataQuery,
  type PropertySpec,
} from '@switchboard/odata';
import type { DataSource } from 'typeorm';

const property = (name: string, kind: PropertySpec['kind'], column: string): PropertySpec => ({ name, kind, column });
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const props = (kind: PropertySpec['kind'], names: string[]) => names.map((n) => property(n, kind, snake(n)));

const channelProperties: PropertySpec[] = [
  ...props('guid', ['id', 'createdBy', 'modifiedBy', 'deletedBy']),
  ...props('datetime-ms', [
    'createdOn',
    'modifiedOn',
    'deletedOn',
    'startTimestamp',
    'stopTimestamp',
    'expiryTimestamp',
  ]),
  ...props('string', [
    'metadata',
    'externalId',
    'tag',
    'applicationId',
    'channelId',
    'fileName',
    'audioFileName',
    'videoFileName',
    'filePath',
    'audioFilePath',
    'videoFilePath',
    'objectKey',
    'audioObjectKey',
    'videoObjectKey',
    'recordingPath',
  ]),
  ...props('boolean', [
    'deleted',
    'hasAudio',
    'hasVideo',
    'ready',
    'audioReady',
    'videoReady',
    'ingested',
    'muxPending',
    'movePending',
    'audioMovePending',
    'videoMovePending',
    'muxEnabled',
    'moveEnabled',
    'deleteFiles',
  ]),
  ...props('integer', ['fileSize', 'audioFileSize', 'videoFileSize']),
  ...props('number', ['muxSeconds', 'moveSeconds', 'audioMoveSeconds', 'videoMoveSeconds']),
  // URLs are signed at read time: selectable, not stored, so neither filterable nor sortable.
  { name: 'url', kind: 'string', sql: () => 'NULL::text', filterable: false, sortable: false },
  { name: 'audioUrl', kind: 'string', sql: () => 'NULL::text', filterable: false, sortable: false },
  { name: 'videoUrl', kind: 'string', sql: () => 'NULL::text', filterable: false, sortable: false },
  { name: 'muxArgs', kind: 'string-array', column: 'mux_args' },
];

/** Interface B channel recording (`ManagementChannelRecording`) over `recording.channel_recording`. */
export const ChannelRecordingModel: EntityModel = defineEntityModel({
  name: 'ChannelRecording',
  key: 'id',
  table: 'recording.channel_recording',
  properties: channelProperties,
});

const connectionProperties: PropertySpec[] = [
  ...props('guid', ['id', 'audioId', 'videoId', 'channelRecordingId', 'createdBy', 'modifiedBy', 'deletedBy']),
  ...props('datetime-ms', [
    'createdOn',
    'modifiedOn',
    'deletedOn',
    'startTimestamp',
    'stopTimestamp',
    'audioFirstFrameTimestamp',
    'videoFirstFrameTimestamp',
    'audioLastFrameTimestamp',
    'videoLastFrameTimestamp',
  ]),
  ...props('string', [
    'metadata',
    'externalId',
    'tag',
    'applicationId',
    'channelId',
    'userId',
    'deviceId',
    'clientId',
    'clientProtocol',
    'connectionId',
    'connectionType',
    'connectionTag',
    'audioFileName',
    'videoFileName',
    'audioFilePath',
    'videoFilePath',
    'audioObjectKey',
    'videoObjectKey',
    'audioContent',
    'videoContent',
  ]),
  ...props('boolean', [
    'deleted',
    'hasAudio',
    'hasVideo',
    'audioReady',
    'videoReady',
    'audioMuted',
    'videoMuted',
    'audioDisabled',
    'videoDisabled',
    'ingested',
    'audioMovePending',
    'videoMovePending',
  ]),
  ...props('integer', ['audioFileSize', 'videoFileSize']),
  ...props('number', ['videoDelay', 'audioMoveSeconds', 'videoMoveSeconds']),
  { name: 'audioUrl', kind: 'string', sql: () => 'NULL::text', filterable: false, sortable: false },
  { name: 'videoUrl', kind: 'string', sql: () => 'NULL::text', filterable: false, sortable: false },
  // The mute timeline (rows of `recording_update`, loaded with the record): selectable only. The
  // model has no kind for a collection of objects; a collection kind is what makes `$select` keep
  // it and `$filter`/`$orderby` refuse it.
  { name: 'updates', kind: 'string-array', sql: () => 'NULL::jsonb', filterable: false, sortable: false },
];

/**
 * Connection recording over `recording.connection_recording`. `updates` (the mute timeline) is in
 * every record and can be named in `$select`; it cannot be filtered or ordered by.
 */
export const ConnectionRecordingModel: EntityModel = defineEntityModel({
  name: 'ConnectionRecording',
  key: 'id',
  table: 'recording.connection_recording',
  properties: connectionProperties,
});

/**
 * The forwarded options bound to `model` (`@switchboard/odata` `parseForwardedQuery`: single reads take `$select` and
 * `$expand`).
 */
export function parseOptions(options: ODataOptions | undefined, model: EntityModel, single: boolean): ODataQuery {
  return parseForwardedQuery(options, model, single);
}

/**
 * Runs an OData list over one table: `where` (tenancy and path parameters, alias `r`) plus the
 * query's `$filter`; ordered by `$orderby` or else `startTimestamp` descending; then `id`.
 * Resolves with the ids of the page, in order, and the count when `$count=true`.
 */
export async function odataPage(
  ds: DataSource,
  model: EntityModel,
  query: ODataQuery,
  where: { sql: string; params: Record<string, unknown> },
): Promise<{ ids: string[]; count?: number }> {
  const qb = ds.createQueryBuilder().select('r.id', 'id').from(model.table!, 'r').where(where.sql, where.params);
  if (query.orderBy.length === 0) qb.orderBy('r.start_timestamp', 'DESC');
  const applied = withForwardedQueryErrors(() => applyODataQuery(qb, query, model, 'r'));
  const rows = (await applied.query.getRawMany()) as Array<{ id: string }>;
  const count = applied.countQuery ? await executeCount(applied.countQuery) : undefined;
  return count === undefined ? { ids: rows.map((r) => r.id) } : { ids: rows.map((r) => r.id), count };
}

export function project(
  record: Record<string, unknown>,
  query: ODataQuery,
  model: EntityModel,
): Record<string, unknown> {
  return projectRecord(record, query, model);
}
