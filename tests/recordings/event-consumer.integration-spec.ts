/**
 * The durable consumer of the domain event stream redelivers a failing event without limit: a
 * lasting failure that is not a dependency being down (disk full, a read-only failover, statement
 * timeouts) must not drop an event (a recording's start) after a few minutes. A consumer left by an
 * earlier version (at most 20 deliveries) is brought to it, keeping its delivery state.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { eventStreamName } from '@switchboard/contracts';
import { ensureEventConsumer } from '@switchboard/service-kit';
import { waitFor } from '@switchboard/testing';
import { startHarness, type Harness } from './harness.js';

describe('recording-service event consumer', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('event_consumer');
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('redelivers without limit; an existing consumer with max deliver 20 is updated, keeping its state', async () => {
    const jsm = await jetstreamManager(h.nc);
    const name = h.env.RECORDINGS_EVENTS_CONSUMER ?? 'recording-service';
    // What an earlier version created.
    await ensureEventConsumer(jsm, h.ns, { name, ackWaitMs: 60_000, maxDeliver: 20, maxAckPending: 1000 });
    const before = await jsm.consumers.info(eventStreamName(h.ns), name);
    expect(before.config.max_deliver).toBe(20);

    await h.start();
    const after = await waitFor(
      async () => {
        const info = await jsm.consumers.info(eventStreamName(h.ns), name);
        return info.config.max_deliver === -1 ? info : null;
      },
      { timeoutMs: 15000, description: 'the consumer to redeliver without limit' },
    );
    expect(after.created).toBe(before.created);
  }, 60_000);
});
