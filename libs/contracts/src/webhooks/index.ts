/**
 * Webhook contracts (http-contract.md, "Webhooks") and the client token payload ("Client edge").
 *
 * Export pattern (same as interface-a/, see interface-a/record-schema.ts): each record is a TypeBox
 * schema and a type of the same name; `WebhookSchemas` names every object schema of this folder and
 * `WebhookValidators.<Name>` is its ready validator (compiled on first use).
 */
import { validatorsFor } from '../interface-a/record-schema.js';
import { ClientTokenPayload } from './client-token.js';
import {
  EventInfo,
  MediaStats,
  WebhookBatch,
  WebhookEventChannel,
  WebhookEventClient,
  WebhookEventConnection,
  WebhookEventMessage,
  WebhookEventRecording,
} from './event-info.js';

export * from './client-token.js';
export * from './event-info.js';
export * from './event-names.js';

export const WebhookSchemas = {
  EventInfo,
  WebhookBatch,
  WebhookEventChannel,
  WebhookEventClient,
  WebhookEventConnection,
  WebhookEventMessage,
  WebhookEventRecording,
  MediaStats,
  ClientTokenPayload,
} as const;

export const WebhookValidators = validatorsFor(WebhookSchemas);
