import { defineEntityModel } from '@switchboard/odata';

/**
 * The OData whitelist of the `Usage` list, over the columns of the `usage_record` CTE built by
 * UsageQueryService (one row per application per hour). `participantMinutes` is a collection of
 * entries; the engine has no collection-of-complex kind, so it is declared as a collection
 * (selectable, never filterable or sortable).
 */
export const usageRecordModel = defineEntityModel({
  name: 'UsageRecord',
  key: 'id',
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'applicationId', kind: 'string', column: 'application_id' },
    { name: 'startTimestamp', kind: 'datetime-ms', column: 'start_timestamp' },
    { name: 'endTimestamp', kind: 'datetime-ms', column: 'end_timestamp' },
    { name: 'participantMessages', kind: 'integer', column: 'participant_messages' },
    {
      name: 'participantMinutes',
      kind: 'string-array',
      column: 'participant_minutes',
      filterable: false,
      sortable: false,
    },
  ],
});
