/**
 * The durable consumer of the domain event stream has bounded deliveries: an event failing by
 * itself is parked after EVENT_MAX_ATTEMPTS (listed and replayable, never dropped, see
 * tests/poison), so JetStream's max deliver is EVENT_MAX_ATTEMPTS + 120. A consumer left by an
 * earlier version (unlimited deliveries) is brought to it, keeping its delivery state.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { eventStreamName } from '@switchboard/contracts';
import { deliveryLimitOf, ensureEventConsumer } from '@switchboard/service-kit';
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

  it('bounds deliveries to EVENT_MAX_ATTEMPTS + 120; an existing consumer with unlimited deliveries is updated, keeping its state', async () => {
    const jsm = await jetstreamManager(h.nc);
    const name = h.env.RECORDINGS_EVENTS_CONSUMER ?? 'recording-service';
    // What an earlier version created.
    await ensureEventConsumer(jsm, h.ns, { name, ackWaitMs: 60_000, maxDeliver: -1, maxAckPending: 1000 });
    const before = await jsm.consumers.info(eventStreamName(h.ns), name);
    expect(before.config.max_deliver).toBe(-1);

    await h.start();
    const after = await waitFor(
      async () => {
        const info = await jsm.consumers.info(eventStreamName(h.ns), name);
        return info.config.max_deliver === deliveryLimitOf(5) ? info : null;
      },
      { timeoutMs: 15000, description: 'the consumer to get bounded deliveries' },
    );
    expect(after.created).toBe(before.created);
  }, 60_000);
});
