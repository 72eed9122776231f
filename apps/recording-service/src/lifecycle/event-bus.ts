import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';
import { ensureEventStream, eventRedeliveryHorizonMs, JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RecordingServiceConfig } from '../config.js';

const NS_PER_MS = 1_000_000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type EventHandler = (event: DomainEvent, msg: JsMsg) => Promise<void>;

/**
 * JetStream side of the service: ensures the event stream and the durable pull consumer, runs the
 * consume loop (one message at a time per replica: ack after the handler committed; a failure is
 * NAKed with a delay and redelivered, at most 20 times), and publishes the service's own events.
 */
@Injectable()
export class EventBus implements OnApplicationShutdown {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private stopped = false;
  private jsm?: JetStreamManager;

  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
  ) {}

  get streamName(): string {
    return eventStreamName(this.config.natsNamespace);
  }

  private async manager(): Promise<JetStreamManager> {
    this.jsm ??= await jetstreamManager(await this.nats.connection$());
    return this.jsm;
  }

  /** Creates the stream when missing (idempotent; an existing stream is left as it is). */
  async ensureStream(): Promise<void> {
    await ensureEventStream(await this.manager(), this.config.natsNamespace);
  }

  async ensureConsumer(): Promise<void> {
    const jsm = await this.manager();
    const name = this.config.eventsConsumerName;
    try {
      await jsm.consumers.info(this.streamName, name);
      return;
    } catch (e) {
      if (!(e instanceof JetStreamApiError) || e.code !== JetStreamApiCodes.ConsumerNotFound) throw e;
    }
    await jsm.consumers.add(this.streamName, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${this.config.natsNamespace}.events.>`,
      ack_wait: 60_000 * NS_PER_MS,
      max_deliver: 20,
      max_ack_pending: 1000,
    });
  }

  /** How long JetStream may still deliver an event (see `eventRedeliveryHorizonMs`); null while it cannot tell. */
  async redeliveryHorizonMs(): Promise<number | null> {
    const jsm = await this.manager().catch(() => null);
    return jsm && eventRedeliveryHorizonMs(jsm, this.config.natsNamespace);
  }

  /** Messages not yet delivered plus delivered but unacknowledged: 0 when the consumer has caught up. */
  async backlog(): Promise<number> {
    const info = await (await this.manager()).consumers.info(this.streamName, this.config.eventsConsumerName);
    return info.num_pending + info.num_ack_pending;
  }

  async start(handler: EventHandler): Promise<void> {
    await this.ensureStream();
    await this.ensureConsumer();
    const js = jetstream(await this.nats.connection$());
    const consumer = await js.consumers.get(this.streamName, this.config.eventsConsumerName);
    this.messages = await consumer.consume({ max_messages: 64 });
    const messages = this.messages;
    this.loop = (async () => {
      for await (const msg of messages) {
        if (this.stopped) {
          msg.nak();
          continue;
        }
        let event: DomainEvent;
        try {
          event = JSON.parse(decoder.decode(msg.data)) as DomainEvent;
          if (!event?.event?.id || typeof event.event.type !== 'string') throw new Error('not a DomainEvent');
        } catch (e) {
          this.logger.event('error', 'dropping an undecodable domain event', { subject: msg.subject, seq: msg.seq, error: (e as Error).message });
          msg.term('undecodable');
          continue;
        }
        try {
          await handler(event, msg);
          msg.ack();
        } catch (e) {
          const attempt = msg.info.deliveryCount;
          this.logger.event('error', 'applying a domain event failed; it will be redelivered', { eventId: event.event.id, type: event.event.type, attempt, error: (e as Error).message });
          msg.nak(Math.min(250 * 2 ** attempt, 10000));
        }
      }
    })();
  }

  /** Publishes domain events (Nats-Msg-Id = event id, so a retried publish is not duplicated); the Outbox relay calls it. */
  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const js = jetstream(await this.nats.connection$());
    for (const e of events) {
      await js.publish(eventSubject(this.config.natsNamespace, e.event.type), encoder.encode(JSON.stringify(e)), { msgID: e.event.id });
    }
  }

  /** Stops taking events; the message in flight finishes (its ack is sent) before this resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.messages?.close().catch(() => undefined);
    await this.loop?.catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }
}
