import { jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName } from '@switchboard/contracts';
import { testNamespace, testServers } from '@switchboard/testing';
import { ensureEventStream, ensureUsageConsumer, eventStreamConfig, USAGE_CONSUMER } from './event-stream.js';

describe('ensuring the event stream and the usage consumer', () => {
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

  it('creates a missing stream and consumer once; calling again (also concurrently) changes nothing', async () => {
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

  it("uses a stream the producer created with its own limits as it is", async () => {
    const ns = testNamespace('producer');
    created.push(eventStreamName(ns));
    const jsm = await jetstreamManager(nc);
    const producers = { ...eventStreamConfig(ns), max_age: 3600 * 1e9, storage: StorageType.Memory, retention: RetentionPolicy.Limits };
    await jsm.streams.add(producers);
    await ensureEventStream(jsm, ns);
    const info = await jsm.streams.info(eventStreamName(ns));
    expect(info.config).toMatchObject({ max_age: 3600 * 1e9, storage: 'memory' });
  });
});
