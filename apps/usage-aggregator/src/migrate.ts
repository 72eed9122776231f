import { databaseSettings, loadConfig } from '@switchboard/config';
import { migrateCli } from '@switchboard/persistence';
import { persistenceOptions } from './persistence.js';

await migrateCli('usage-aggregator', () => persistenceOptions(loadConfig(databaseSettings()).databaseUrl, 1));
