import { defineEntityModel } from '@switchboard/odata';
import { applicationWebhookModel } from '../application-webhooks/application-webhook.model.js';
import { secret } from '../common/audit-columns.js';
import type { EntitySetSpec } from '../common/record-reader.js';

/** `webhooks` is a navigation property: null unless `$expand=webhooks`. */
export const applicationConfigModel = defineEntityModel({
  name: 'ApplicationConfig',
  key: 'id',
  table: 'management.application_config',
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'organizationId', kind: 'guid', column: 'organization_id' },
    { name: 'disabled', kind: 'boolean' },
    { name: 'tag', kind: 'string' },
    { name: 'applicationId', kind: 'string', column: 'application_id' },
    secret('sharedSecret', 'shared_secret'),
  ],
  navigations: [
    {
      name: 'webhooks',
      many: true,
      target: applicationWebhookModel,
      relation: { kind: 'foreign-key', localKey: 'id', foreignKey: 'applicationConfigId' },
    },
  ],
});

export const APPLICATION_CONFIGS: EntitySetSpec = {
  name: 'ApplicationConfig',
  model: applicationConfigModel,
  tenantColumn: 'organization_id',
  deferred: ['webhooks'],
  defaultOrder: ['"e"."created_on"'],
};
