import { Column, Entity } from 'typeorm';
import { WebhookColumns } from '../common/webhook-records.js';

@Entity({ name: 'channel_webhook' })
export class ChannelWebhookEntity extends WebhookColumns {
  @Column({ name: 'channel_config_id', type: 'uuid' })
  channelConfigId!: string;
}
