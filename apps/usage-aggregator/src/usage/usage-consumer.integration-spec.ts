import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName } from '@switchboard/contracts';
import { testNamespace, testServers } from '@switchboard/testing';
import { ensureEventStream } from '@switchboard/service-kit';
import { ensureUsageConsumer, USAGE_CONSUMER } from './event-stream.js';

describe('ensuring the usage consumer', () => {
  let nc: NatsConnection;
  const created: string[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: testServers().natsUrl });
  });

  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    for (const name of created) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
  });

  it('creates a missing consumer once; calling again (also concurrently) changes nothing', async () => {
    const ns = testNamespace('stream');
    created.push(eventStreamName(ns));
    const jsm = await jetstreamManager(nc);
    await Promise.all([ensureEventStream(jsm, ns), ensureEventStream(jsm, ns)]);
    await Promise.all([ensureUsageConsumer(jsm, ns), ensureUsageConsumer(jsm, ns)]);
    const stream = await jsm.streams.info(eventStreamName(ns));
    expect(stream.config.subjects).toEqual([`${ns}.events.>`]);
    const consumer = await jsm.consumers.info(eventStreamName(ns), USAGE_CONSUMER);
    expect(consumer.config).toMatchObject({ durable_name: USAGE_CONSUMER, ack_policy: 'explicit', deliver_policy: 'all', filter_subject: `${ns}.events.>` });
    await ensureEventStream(jsm, ns);
    await ensureUsageConsumer(jsm, ns);
    expect((await jsm.streams.info(eventStreamName(ns))).created).toBe(stream.created);
    expect((await jsm.consumers.info(eventStreamName(ns), USAGE_CONSUMER)).created).toBe(consumer.created);
  });
});
