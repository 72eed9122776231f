/**
 * The webhook event catalog (http-contract.md, "Webhooks"): LiveSwitch's event names, unchanged.
 */
import type { Static } from '@sinclair/typebox';
import { StringEnum } from '../interface-a/record-schema.js';

export const WEBHOOK_EVENT_NAMES = [
  'channel.activated',
  'channel.deactivated',
  'channel.client.joined',
  'channel.client.left',
  'channel.client.message',
  'channel.server.message',
  'channel.recording.ready',
  'channel.recording.audio.ready',
  'channel.recording.video.ready',
  'channel.recording.expired',
  'channel.recording.mux.failed',
  'channel.recording.move.failed',
  'client.registered',
  'client.unregistered',
  'client.updated',
  'client.message',
  'client.stats',
  'connection.initializing',
  'connection.connecting',
  'connection.connected',
  'connection.failing',
  'connection.failed',
  'connection.closing',
  'connection.closed',
  'connection.updated',
  'connection.stats',
  'connection.recording.audio.ready',
  'connection.recording.video.ready',
  'connection.recordings.ready',
  'server.message',
] as const;

const NAMES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_NAMES);

export function isWebhookEventName(value: unknown): value is WebhookEventName {
  return typeof value === 'string' && NAMES.has(value);
}

/** The wildcard of a webhook's `events` list: all events. */
export const WEBHOOK_ALL_EVENTS = '*' as const;

/** An event name: schema and type (`(typeof WEBHOOK_EVENT_NAMES)[number]`). */
export const WebhookEventName = StringEnum(WEBHOOK_EVENT_NAMES, {
  description: 'Webhook event name.',
  errorMessage: 'must be a webhook event name',
});
export type WebhookEventName = Static<typeof WebhookEventName>;

/** An element of a webhook's `events` list: an event name or `*`. */
export const WebhookEventSelector = StringEnum([...WEBHOOK_EVENT_NAMES, WEBHOOK_ALL_EVENTS], {
  description: 'An event name, or `*` for all events.',
  errorMessage: 'must be a webhook event name or `*`',
});
export type WebhookEventSelector = Static<typeof WebhookEventSelector>;

/** Whether a webhook with this `events` list wants `event`: an empty (or null) list or `*` means all. */
export function webhookWantsEvent(events: readonly string[] | null | undefined, event: WebhookEventName): boolean {
  if (!events || events.length === 0) return true;
  return events.includes(WEBHOOK_ALL_EVENTS) || events.includes(event);
}
