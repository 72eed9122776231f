import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import {
  oneByOneConsumerLoop,
  type EventConsumerLoop,
  type EventConsumerLoopOptions,
  type JsonLogger,
  type Metrics,
  type NatsClient,
} from '@switchboard/service-kit';
import type { ManagementConfig } from '../config.js';

/** What a management-api durable consumer is built from. */
export interface ConsumerDependencies {
  nats: NatsClient;
  config: ManagementConfig;
  logger: JsonLogger;
  metrics: Metrics;
}

/** A management-api durable consumer: one message at a time, 30 s to ack, parked after EVENT_MAX_ATTEMPTS. */
export function managementConsumerLoop(
  { nats, config, logger, metrics }: ConsumerDependencies,
  consumer: { name: string; description: string; stream: EventConsumerLoopOptions['stream'] },
  processOne: (msg: JsMsg) => Promise<void>,
): EventConsumerLoop {
  return oneByOneConsumerLoop(
    {
      namespace: config.natsNamespace,
      stream: consumer.stream,
      spec: { name: consumer.name, description: consumer.description, ackWaitMs: 30_000, maxAckPending: 1000 },
      maxMessages: 64,
      connection: () => nats.connection$(),
      logger,
      parking: { service: 'management-api', maxAttempts: config.eventMaxAttempts, registry: metrics.registry },
    },
    processOne,
  );
}

/** Starts the consumer with the application and stops it on shutdown (2 s for the message in hand). */
export abstract class ConsumerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  protected abstract readonly consumer: EventConsumerLoop;

  onApplicationBootstrap(): void {
    this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop(2000);
  }
}
