import { RecordReader } from '../common/record-reader.js';
import { webhookModel, webhookSet, type WebhookKind } from '../common/webhook-records.js';
import { ChannelWebhookEntity } from './channel-webhook.entity.js';

export const channelWebhookModel = webhookModel(
  'ChannelWebhook',
  'management.channel_webhook',
  'channelConfigId',
  'channel_config_id',
);

export const CHANNEL_WEBHOOKS = webhookSet(channelWebhookModel);

export const CHANNEL_WEBHOOK_KIND: WebhookKind = {
  entityType: 'ChannelWebhook',
  entity: ChannelWebhookEntity,
  reader: new RecordReader(CHANNEL_WEBHOOKS),
  parentProperty: 'channelConfigId',
  parentColumn: 'channel_config_id',
};
