import { defineEntityModel } from '@switchboard/odata';

/** The `/WebhookDeliveries` entity (one delivery attempt) over `webhook.delivery_attempt`. */
export const WEBHOOK_DELIVERY_TABLE = 'webhook.delivery_attempt';

export const webhookDeliveryModel = defineEntityModel({
  name: 'WebhookDelivery',
  key: 'id',
  table: WEBHOOK_DELIVERY_TABLE,
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'deliveryId', kind: 'guid', column: 'delivery_id' },
    { name: 'webhookId', kind: 'string', column: 'webhook_id' },
    { name: 'webhookSource', kind: 'string', column: 'webhook_source' },
    { name: 'organizationId', kind: 'string', column: 'organization_id' },
    { name: 'applicationId', kind: 'string', column: 'application_id' },
    { name: 'channelId', kind: 'string', column: 'channel_id' },
    { name: 'eventId', kind: 'string', column: 'event_id' },
    { name: 'eventType', kind: 'string', column: 'event_type' },
    { name: 'eventIds', kind: 'string-array', column: 'event_ids' },
    { name: 'eventCount', kind: 'integer', column: 'event_count' },
    { name: 'batch', kind: 'boolean' },
    { name: 'url', kind: 'string' },
    { name: 'attempt', kind: 'integer' },
    { name: 'statusCode', kind: 'integer', column: 'status_code' },
    { name: 'error', kind: 'string' },
    { name: 'success', kind: 'boolean' },
    { name: 'final', kind: 'boolean' },
    { name: 'durationMs', kind: 'integer', column: 'duration_ms' },
    { name: 'attemptedOn', kind: 'datetime-ms', column: 'attempted_on' },
    { name: 'replayOf', kind: 'guid', column: 'replay_of' },
  ],
});
