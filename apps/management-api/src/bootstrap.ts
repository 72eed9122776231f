/**
 * First-run bootstrap, used by `npm start` and by operators: creates the first organization and an
 * operator API key when none exists, and prints one JSON line `{ organizationId, apiKey }`
 * (`apiKey` null when a key already existed).
 */
import { databaseSettings, loadConfig, str } from '@switchboard/config';
import { dataSourceOptions } from '@switchboard/persistence';
import { DataSource } from 'typeorm';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { persistenceOptions } from './persistence.js';

const config = loadConfig({
  ...databaseSettings(),
  organizationName: str({
    env: 'BOOTSTRAP_ORGANIZATION_NAME',
    default: 'Default organization',
    description: 'Name of the organization created on first run',
  }),
});
const ds = new DataSource(dataSourceOptions(persistenceOptions(config.databaseUrl, 1)));
try {
  await ds.initialize();
  const result = await new ApiKeysService(ds).bootstrap(config.organizationName);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (e) {
  process.stderr.write(`management-api bootstrap failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
} finally {
  if (ds.isInitialized) await ds.destroy();
}
