import type { PersistenceOptions } from '@switchboard/persistence';
import { ApiKeyEntity } from './api-keys/api-key.entity.js';
import { migrations } from './migrations/index.js';
import { OrganizationEntity } from './organizations/organization.entity.js';

export const SCHEMA = 'management';
export const entities = [OrganizationEntity, ApiKeyEntity];

export function persistenceOptions(url: string, poolSize?: number): PersistenceOptions {
  return { url, schema: SCHEMA, entities, migrations, poolSize, applicationName: 'management-api' };
}
