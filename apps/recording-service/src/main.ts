import { runService } from '@switchboard/service-kit';
import { buildRecordingService } from './app.js';
import { loadRecordingServiceConfig, type RecordingServiceConfig } from './config.js';

await runService('recording-service', loadRecordingServiceConfig, (c) =>
  buildRecordingService(c as RecordingServiceConfig),
);
