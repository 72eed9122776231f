import { Inject, Injectable } from '@nestjs/common';
import { Type, type Static } from '@sinclair/typebox';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  DomainError,
  eventSubject,
  WEBHOOK_TEST_EVENT,
  type DomainEvent,
  type EventInfo,
} from '@switchboard/contracts';
import { ensureEventStream, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import type { EntityValues } from './record-reader.js';

export const WebhookTestSent = Type.Object(
  {
    eventId: Type.String({
      description: "The test event's id: its delivery attempts show in `/WebhookDeliveries` with this `eventId`.",
    }),
  },
  { $id: 'WebhookTestSent', additionalProperties: false, description: 'A test event queued for a webhook.' },
);
export type WebhookTestSent = Static<typeof WebhookTestSent>;

/**
 * Interface B `SendTest`: a `webhook.test` event of the webhook's application, put on the domain
 * event stream for webhook-worker, which delivers it to that one webhook like any event (signed,
 * retried when reliable, logged).
 */
@Injectable()
export class WebhookTests {
  private streamReady?: Promise<unknown>;

  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: { natsNamespace: string },
  ) {}

  async send(
    caller: Caller,
    webhook: EntityValues,
    source: 'application' | 'channel',
    applicationId: string,
  ): Promise<WebhookTestSent> {
    if (typeof webhook.url !== 'string' || webhook.url === '')
      throw new DomainError('Conflict', 'The webhook has no URL to send a test event to.', [
        { field: 'url', message: 'is null' },
      ]);
    const event: EventInfo = {
      id: randomUUID(),
      timestamp: Date.now(),
      origin: 'api',
      type: WEBHOOK_TEST_EVENT as EventInfo['type'],
      forced: false,
      channel: null,
      client: null,
      connection: null,
      message: null,
    };
    const domain: DomainEvent = {
      event,
      applicationId,
      organizationId: caller.organizationId,
      testWebhook: {
        id: webhook.id as string,
        source,
        url: webhook.url,
        events: (webhook.events as string[] | null) ?? null,
        batch: webhook.batch === true,
        reliable: webhook.reliable === true,
        disabled: webhook.disabled === true,
      },
    };
    const nc = await this.nats.connection$();
    // The stream is created by whoever starts first; management-api may be first on a fresh deployment.
    this.streamReady ??= jetstreamManager(nc).then((jsm) => ensureEventStream(jsm, this.config.natsNamespace));
    try {
      await this.streamReady;
      await jetstream(nc).publish(eventSubject(this.config.natsNamespace, event.type), JSON.stringify(domain), {
        msgID: event.id,
      });
    } catch (e) {
      this.streamReady = undefined;
      throw new DomainError('Unavailable', `The event stream did not take the test event: ${(e as Error).message}`);
    }
    return { eventId: event.id };
  }
}
