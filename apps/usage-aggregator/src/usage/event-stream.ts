import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import { eventStreamName } from '@switchboard/contracts';

const NANOS_PER_MS = 1_000_000;

/** Durable consumer name: one per deployment namespace (the stream is per namespace). */
export const USAGE_CONSUMER = 'usage-aggregator';

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
