import { RecordReader } from '../common/record-reader.js';
import { webhookModel, webhookSet, type WebhookKind } from '../common/webhook-records.js';
import { ApplicationWebhookEntity } from './application-webhook.entity.js';

export const applicationWebhookModel = webhookModel(
  'ApplicationWebhook',
  'management.application_webhook',
  'applicationConfigId',
  'application_config_id',
);

export const APPLICATION_WEBHOOKS = webhookSet(applicationWebhookModel);

export const APPLICATION_WEBHOOK_KIND: WebhookKind = {
  entityType: 'ApplicationWebhook',
  entity: ApplicationWebhookEntity,
  reader: new RecordReader(APPLICATION_WEBHOOKS),
  parentProperty: 'applicationConfigId',
  parentColumn: 'application_config_id',
};
