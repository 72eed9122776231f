import { Column, Entity } from 'typeorm';
import { WebhookColumns } from '../common/webhook-records.js';

@Entity({ name: 'application_webhook' })
export class ApplicationWebhookEntity extends WebhookColumns {
  @Column({ name: 'application_config_id', type: 'uuid' })
  applicationConfigId!: string;
}
