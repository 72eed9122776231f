import { Inject } from '@nestjs/common';

/** The validated configuration of this process (WebhookWorkerConfig). */
export const WEBHOOK_CONFIG = Symbol('WEBHOOK_CONFIG');
export const InjectWebhookConfig = () => Inject(WEBHOOK_CONFIG);
