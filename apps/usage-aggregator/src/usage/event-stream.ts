import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { eventStreamName } from '@switchboard/contracts';

const NANOS_PER_MS = 1_000_000;

/** Durable consumer name: one per deployment namespace (the stream is per namespace). */
export const USAGE_CONSUMER = 'usage-aggregator';

/**
 * The domain event stream, as usage-aggregator creates it when it starts before the producer
 * (runtime-registry). Whoever comes first creates it; the other uses it as it is, so a
 * difference in limits never stops a service (see `ensureEventStream`).
 */
export function eventStreamConfig(namespace: string): Partial<StreamConfig> & { name: string; subjects: string[] } {
  return {
    name: eventStreamName(namespace),
    subjects: [`${namespace}.events.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: 7 * 24 * 3600 * 1000 * NANOS_PER_MS,
    duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
    num_replicas: 1,
  };
}

export function usageConsumerConfig(namespace: string): Partial<ConsumerConfig> {
  return {
    durable_name: USAGE_CONSUMER,
    description: 'usage-aggregator: participant minutes and messages',
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: `${namespace}.events.>`,
    ack_wait: 15_000 * NANOS_PER_MS,
    max_deliver: -1,
    max_ack_pending: 1000,
  };
}

function isNotFound(e: unknown): boolean {
  return e instanceof JetStreamApiError && (e.status === 404 || e.code === JetStreamApiCodes.StreamNotFound || e.code === JetStreamApiCodes.ConsumerNotFound);
}

/** Creates the stream when it is missing; an existing stream is used as it is (idempotent, race-safe). */
export async function ensureEventStream(jsm: JetStreamManager, namespace: string): Promise<void> {
  const config = eventStreamConfig(namespace);
  try {
    await jsm.streams.info(config.name);
    return;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  try {
    await jsm.streams.add(config);
  } catch (e) {
    // Created meanwhile by another service or replica (with its own limits): use it.
    await jsm.streams.info(config.name).catch(() => {
      throw e;
    });
  }
}

/** Creates the durable consumer when it is missing; an existing one keeps its delivery state. */
export async function ensureUsageConsumer(jsm: JetStreamManager, namespace: string): Promise<void> {
  const stream = eventStreamName(namespace);
  try {
    await jsm.consumers.info(stream, USAGE_CONSUMER);
    return;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  try {
    await jsm.consumers.add(stream, usageConsumerConfig(namespace));
  } catch (e) {
    await jsm.consumers.info(stream, USAGE_CONSUMER).catch(() => {
      throw e;
    });
  }
}
