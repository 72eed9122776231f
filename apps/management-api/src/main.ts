import { runService } from '@switchboard/service-kit';
import { buildManagementApi } from './app.js';
import { loadManagementConfig, type ManagementConfig } from './config.js';

await runService('management-api', loadManagementConfig, (c) => buildManagementApi(c as ManagementConfig));
