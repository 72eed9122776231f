import {
  webhookWantsEvent,
  type DomainEvent,
  type EventInfo,
  type ResolvedWebhook,
  type WebhookEventName,
} from '@switchboard/contracts';

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

/**
 * The webhooks a domain event goes to: a test event (interface B `SendTest`) to the one webhook it names, even
 * disabled or not wanting it (an operator asked for it); any other event as `webhooksFor` says.
 */
export function webhooksOfEvent(webhooks: readonly ResolvedWebhook[], domain: DomainEvent): ResolvedWebhook[] {
  const target = domain.testWebhook;
  if (target) return typeof target.url === 'string' && target.url.length > 0 ? [target] : [];
  return webhooksFor(webhooks, domain.event.type);
}

/** The channel an event happened in: its channel part, else its connection's channel. */
export function channelOf(event: Pick<EventInfo, 'channel' | 'connection'>): string | null {
  return event.channel?.id ?? event.connection?.channelId ?? null;
}
