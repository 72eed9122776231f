import type { ApiDocOptions } from '@switchboard/service-kit';
import { API_VERSION_DOC } from './odata-query.js';
import { WebhookTestSent } from './webhook-tests.js';

/** The OpenAPI description of `DELETE /<Kind>Webhooks/{id}` (`noun`: "an application webhook", "a channel webhook"). */
export function webhookDeleteDoc(noun: string, tags: string[]): ApiDocOptions {
  return {
    summary: `Delete ${noun}`,
    description:
      'Nothing more is delivered to it (webhook-worker drops its cached configuration on the applications.changed notice); its past deliveries stay in the delivery log. A change record of type `Delete` is written.',
    tags,
    status: 204,
    errors: [404],
    query: API_VERSION_DOC,
  };
}

/** The OpenAPI description of `POST /<Kind>Webhooks/{id}/SendTest`. */
export function webhookSendTestDoc(noun: string, tags: string[]): ApiDocOptions {
  return {
    summary: `Send a test event to ${noun}`,
    description:
      'Queues one event of type `webhook.test` (no channel, client, connection or message) for this webhook only, even when it is disabled or its `events` leave the type out. ' +
      'webhook-worker delivers it like any event (signed, retried when `reliable`); its attempts show in `/WebhookDeliveries` with the `eventId` answered. 409 when the webhook has no URL; 503 when the event stream does not take it.',
    tags,
    response: WebhookTestSent,
    status: 202,
    errors: [404, 409, 503],
    query: API_VERSION_DOC,
  };
}
