/**
 * Redis losing its data under a running recording-service (no persistence, a failover to an empty
 * replica): the sweeper's schedule, which BullMQ keeps in Redis, is written again, so the sweeps
 * (expiry, file removals, stalled steps) go on without a restart of the service.
 */
import { Queue } from 'bullmq';
import { flushRedisPrefix, testServers, waitFor } from '@switchboard/testing';
import { startHarness, type Harness } from './harness.js';

describe('recording-service when Redis loses its data', () => {
  let h: Harness;
  let sweep: Queue;

  beforeAll(async () => {
    h = await startHarness('redisloss');
    await h.start();
    sweep = new Queue(`${h.ns}-recording-sweep`, {
      connection: { url: testServers().redisUrl },
      prefix: `${h.env.REDIS_KEY_PREFIX}bull`,
    });
  }, 60_000);

  afterAll(async () => {
    await sweep?.close();
    await h?.close();
  });

  it('writes the sweeper schedule again', async () => {
    await waitFor(async () => (await sweep.getJobScheduler('recording-sweeper')) ?? null, {
      timeoutMs: 15000,
      description: 'the sweeper schedule',
    });
    await flushRedisPrefix(testServers().redisUrl, h.env.REDIS_KEY_PREFIX!);
    expect(await sweep.getJobScheduler('recording-sweeper')).toBeUndefined();
    await waitFor(async () => (await sweep.getJobScheduler('recording-sweeper')) ?? null, {
      timeoutMs: 20000,
      intervalMs: 250,
      description: 'the sweeper schedule to be written again',
    });
  }, 60_000);
});
