import { runService } from '@switchboard/service-kit';
import { buildWebhookWorker } from './app.js';
import { loadWebhookWorkerConfig, type WebhookWorkerConfig } from './config.js';

await runService('webhook-worker', loadWebhookWorkerConfig, (c) => buildWebhookWorker(c as WebhookWorkerConfig));
