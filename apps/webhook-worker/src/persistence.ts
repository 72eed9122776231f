import type { PersistenceOptions } from '@switchboard/persistence';
import { migrations } from './migrations/index.js';

export const SCHEMA = 'webhook';

export function persistenceOptions(url: string, poolSize?: number): PersistenceOptions {
  return { url, schema: SCHEMA, entities: [], migrations, poolSize, applicationName: 'webhook-worker' };
}
