/** ensureEventStream on the jest run's real NATS: created once under races, owner and consumers. */
import { jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName, eventStreamSettings } from '@switchboard/contracts';
import { testNamespace, testServers } from '@switchboard/testing';
import { ensureEventStream, eventRedeliveryHorizonMs, eventStreamConfig } from './event-stream.js';

describe('ensureEventStream', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const created: string[] = [];
  const fresh = (tag: string) => {
    const ns = testNamespace(tag);
    created.push(eventStreamName(ns));
    return ns;
  };

  beforeAll(async () => {
    nc = await connect({ servers: testServers().natsUrl });
    jsm = await jetstreamManager(nc);
  });

  afterAll(async () => {
    for (const name of created) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
  });

  it('creates the contract stream, however many services race to create it, and leaves it alone afterwards', async () => {
    const ns = fresh('race');
    const outcomes = await Promise.all([
      ensureEventStream(jsm, ns),
      ensureEventStream(jsm, ns),
      ensureEventStream(jsm, ns, { enforce: true }),
    ]);
    // JetStream answers an identical add as a success, so racing creators may all report 'created'.
    expect(outcomes).toContain('created');
    expect(outcomes.every((o) => o === 'created' || o === 'existing')).toBe(true);
    const info = await jsm.streams.info(eventStreamName(ns));
    const settings = eventStreamSettings(ns);
    expect(info.config).toMatchObject({
      subjects: settings.subjects,
      max_age: nanos(settings.maxAgeMs),
      duplicate_window: nanos(settings.duplicateWindowMs),
      retention: 'limits',
      storage: 'file',
      discard: 'old',
    });
    expect(await ensureEventStream(jsm, ns)).toBe('existing');
    expect((await jsm.streams.info(eventStreamName(ns))).created).toBe(info.created);
  });

  it("leaves a stream created with other limits as it is for consumers, and brings it to the owner's limits", async () => {
    const ns = fresh('owner');
    await jsm.streams.add({
      ...eventStreamConfig(ns),
      max_age: nanos(3_600_000),
      storage: StorageType.Memory,
      subjects: [`${ns}.legacy.>`],
    });
    expect(await ensureEventStream(jsm, ns)).toBe('existing');
    expect((await jsm.streams.info(eventStreamName(ns))).config).toMatchObject({
      max_age: nanos(3_600_000),
      storage: 'memory',
    });

    const limits = { maxAgeMs: 86_400_000, duplicateWindowMs: 30_000, replicas: 1 };
    expect(await ensureEventStream(jsm, ns, { enforce: true, limits })).toBe('updated');
    const { config } = await jsm.streams.info(eventStreamName(ns));
    expect(config).toMatchObject({ max_age: nanos(86_400_000), duplicate_window: nanos(30_000) });
    expect(config.subjects?.sort()).toEqual([`${ns}.events.>`, `${ns}.legacy.>`].sort());
    expect(await ensureEventStream(jsm, ns, { enforce: true, limits })).toBe('existing');
  });

  describe('eventRedeliveryHorizonMs', () => {
    const week = eventStreamSettings('x').maxAgeMs;

    it("is the live stream's max age when longer than the contract's, and never shorter than the contract's or the floor", async () => {
      const long = fresh('horizon-long');
      await jsm.streams.add({ ...eventStreamConfig(long), max_age: nanos(3 * week) });
      expect(await eventRedeliveryHorizonMs(jsm, long)).toBe(3 * week);
      const short = fresh('horizon-short');
      await jsm.streams.add({ ...eventStreamConfig(short), max_age: nanos(3_600_000) });
      expect(await eventRedeliveryHorizonMs(jsm, short)).toBe(week);
      expect(await eventRedeliveryHorizonMs(jsm, short, 5 * week)).toBe(5 * week);
    });

    it('is null when the stream keeps events forever or does not exist: nothing may be forgotten', async () => {
      const forever = fresh('horizon-forever');
      await jsm.streams.add({ ...eventStreamConfig(forever), max_age: 0 });
      expect(await eventRedeliveryHorizonMs(jsm, forever)).toBeNull();
      expect(await eventRedeliveryHorizonMs(jsm, fresh('horizon-missing'))).toBeNull();
    });
  });
});
