/**
 * usage-aggregator while its PostgreSQL crashes: a server of the test's own (the run's shared one
 * serves every other suite) crashed in immediate mode while the aggregator applies a backlog, more
 * events published while it is down, then started again (recovery from its WAL). The aggregator
 * keeps running (nothing restarts it here), and once it has caught up every event is applied once
 * and the totals are exact.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName, type CallerScope } from '@switchboard/contracts';
import {
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  startOwnPostgres,
  testNamespace,
  testServers,
  waitFor,
  type OwnPostgres,
  type SpawnedService,
} from '@switchboard/testing';
import { backlogScenario, summarize, UsageHarness } from './usage-harness.js';

const ORG = 'org-1';
const APP = 'app-crash';
const scope: CallerScope = { organizationId: ORG, operator: false, principal: 'key-1' };

describe('usage-aggregator with its PostgreSQL crashed', () => {
  const servers = testServers();
  const ns = testNamespace('usagepg');
  let postgres: OwnPostgres | undefined;
  let service: SpawnedService | undefined;
  let nc: NatsConnection | undefined;
  let h: UsageHarness;

  afterAll(async () => {
    await service?.stop();
    if (h) await (await h.jsm()).streams.delete(eventStreamName(ns)).catch(() => undefined);
    await nc?.close();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await postgres?.stop();
  });

  it('crashed while applying a backlog, more events while it is down, restarted: every event applied once, totals exact', async () => {
    postgres = await startOwnPostgres('usage');
    const databaseUrl = (await postgres.createDatabase('usage', ['usage-aggregator'])).url;
    nc = await connect({ servers: servers.natsUrl });
    h = new UsageHarness(nc, ns, databaseUrl);
    const start = async () =>
      (service = await spawnService('usage-aggregator', {
        ...serviceTestEnv(ns, databaseUrl),
        HTTP_PORT: String(await freePort()),
      }));
    const { phase1, phase2, expected } = backlogScenario(APP, ORG);

    // A backlog: the aggregator creates the stream, stops, and the first phase waits in the stream.
    await start();
    await service!.stop();
    await h.publishAll(phase1);
    await start();
    await waitFor(async () => (await h.processedCount()) >= 50, {
      timeoutMs: 30000,
      intervalMs: 5,
      description: 'the aggregator to start on the backlog',
    });
    await postgres.crash();
    await h.publishAll(phase2);
    await new Promise((r) => setTimeout(r, 1500));
    // Events still unapplied when PostgreSQL came back: the crash cut into the backlog.
    const consumer = await (await h.jsm()).consumers.info(eventStreamName(ns), 'usage-aggregator');
    expect(consumer.num_pending + consumer.num_ack_pending).toBeGreaterThan(phase2.length);
    await postgres.start();
    await h.drained(90000);

    expect(summarize(await h.query(scope, APP, Date.UTC(2025, 2, 1, 9), Date.UTC(2025, 2, 1, 11)))).toEqual(expected);
    expect(await h.processedCount()).toBe(phase1.length + phase2.length);
  }, 150000);
});
