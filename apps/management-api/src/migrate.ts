import { migrateCli } from '@switchboard/persistence';
import { loadConfig, databaseSettings } from '@switchboard/config';
import { persistenceOptions } from './persistence.js';

await migrateCli('management-api', () => persistenceOptions(loadConfig(databaseSettings()).databaseUrl, 1));
