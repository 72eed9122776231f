import { defineEntityModel } from '@switchboard/odata';
import { auditProperties, BY_CREATION } from '../common/audit-columns.js';
import type { EntitySetSpec } from '../common/record-reader.js';

/** `key` is never readable: only its hash is stored, and the value is shown once, by the create call. */
export const apiKeyModel = defineEntityModel({
  name: 'ApiKey',
  key: 'id',
  table: 'management.api_key',
  properties: [
    { name: 'key', kind: 'string', sql: () => 'CAST(NULL AS text)', filterable: false, sortable: false },
    { name: 'tag', kind: 'string' },
    { name: 'disabled', kind: 'boolean' },
    { name: 'id', kind: 'guid' },
    ...auditProperties(),
  ],
});

export const API_KEYS: EntitySetSpec = {
  name: 'ApiKey',
  model: apiKeyModel,
  tenantColumn: 'organization_id',
  defaultOrder: BY_CREATION,
};
