import { databaseSettings, loadConfig } from '@switchboard/config';
import { migrateCli } from '@switchboard/persistence';
import { persistenceOptions } from './persistence.js';

await migrateCli('recording-service', () => persistenceOptions(loadConfig(databaseSettings()).databaseUrl, 1));
