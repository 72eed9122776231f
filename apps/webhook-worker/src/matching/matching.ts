import { webhookWantsEvent, type EventInfo, type ResolvedWebhook, type WebhookEventName } from '@switchboard/contracts';

/**
 * The webhooks an event goes to, out of the resolved webhooks of its application and channel:
 * enabled, with a URL, and wanting the event type (`events` null, empty or `*`: every event).
 */
export function webhooksFor(webhooks: readonly ResolvedWebhook[], eventType: string): ResolvedWebhook[] {
  return webhooks.filter(
    (w) =>
      !w.disabled &&
      typeof w.url === 'string' &&
      w.url.length > 0 &&
      webhookWantsEvent(w.events, eventType as WebhookEventName),
  );
}

/** The channel an event happened in: its channel part, else its connection's channel. */
export function channelOf(event: Pick<EventInfo, 'channel' | 'connection'>): string | null {
  return event.channel?.id ?? event.connection?.channelId ?? null;
}
