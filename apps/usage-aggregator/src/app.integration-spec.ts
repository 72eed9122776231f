/**
 * usage-aggregator keeps its state in PostgreSQL and JetStream only: it needs no Redis setting, and
 * a Redis outage leaves it ready. Real NATS and PostgreSQL; Redis is an address nobody answers at.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { eventStreamName } from '@switchboard/contracts';
import {
  createTestDatabase,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { loadUsageAggregatorConfig } from './config.js';

describe('usage-aggregator without Redis', () => {
  const ns = testNamespace('usage_noredis');
  let db: TestDatabase;
  let service: SpawnedService | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('usage_noredis');
  });

  afterAll(async () => {
    await service?.stop();
    const nc = await connect({ servers: testServers().natsUrl });
    await (await jetstreamManager(nc)).streams.delete(eventStreamName(ns)).catch(() => undefined);
    await nc.close();
    await db?.drop();
  });

  it('has no Redis setting: its configuration loads from NATS_URL and DATABASE_URL alone', () => {
    const config = loadUsageAggregatorConfig({
      NATS_URL: 'nats://127.0.0.1:4222',
      DATABASE_URL: 'postgresql://u:p@127.0.0.1:5432/db',
    });
    expect(Object.keys(config).filter((k) => /redis/i.test(k))).toEqual([]);
  });

  it('is ready while Redis cannot be reached, and its /readyz has no redis check', async () => {
    const deadRedis = `redis://127.0.0.1:${await freePort()}`;
    service = await spawnService(
      'usage-aggregator',
      { ...serviceTestEnv(ns, db.url), REDIS_URL: deadRedis, HTTP_PORT: String(await freePort()) },
      { readyTimeoutMs: 20000 },
    );
    const res = await fetch(`${service.url}/readyz`);
    const body = (await res.json()) as { checks: Record<string, string> };
    expect(res.status).toBe(200);
    expect(body.checks.redis).toBeUndefined();
    expect(body.checks).toMatchObject({ postgres: 'ok', 'event-stream': 'ok' });
  });
});
