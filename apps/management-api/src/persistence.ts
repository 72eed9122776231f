import type { PersistenceOptions } from '@switchboard/persistence';
import { ApiKeyEntity } from './api-keys/api-key.entity.js';
import { ApplicationConfigEntity } from './application-configs/application-config.entity.js';
import { ApplicationWebhookEntity } from './application-webhooks/application-webhook.entity.js';
import { ChangeRecordEntity } from './change-records/change-record.entity.js';
import { ChannelConfigEntity } from './channel-configs/channel-config.entity.js';
import { ChannelWebhookEntity } from './channel-webhooks/channel-webhook.entity.js';
import { ParkedEventEntity } from './parked-events/parked-event.entity.js';
import { migrations } from './migrations/index.js';
import { OrganizationEntity } from './organizations/organization.entity.js';
import { PaymentMethodEntity } from './payment-methods/payment-method.entity.js';
import { SubscriptionEntity } from './subscriptions/subscription.entity.js';
import { UserAccountEntity } from './user-accounts/user-account.entity.js';

export const SCHEMA = 'management';
export const entities = [
  OrganizationEntity,
  ApiKeyEntity,
  ApplicationConfigEntity,
  ApplicationWebhookEntity,
  ChannelConfigEntity,
  ChannelWebhookEntity,
  ChangeRecordEntity,
  ParkedEventEntity,
  PaymentMethodEntity,
  SubscriptionEntity,
  UserAccountEntity,
];

export function persistenceOptions(url: string, poolSize?: number): PersistenceOptions {
  return { url, schema: SCHEMA, entities, migrations, poolSize, applicationName: 'management-api' };
}
