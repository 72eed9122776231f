/**
 * usage-aggregator prunes its idempotency and connection tables (USAGE_LEDGER_RETENTION_SECONDS,
 * USAGE_PRUNE_INTERVAL_MS), never below what JetStream can still redeliver: the contract's stream
 * max age (7 days), or the live stream's when longer. Real NATS, PostgreSQL and Redis; the rows
 * to age are written with the times the test chooses.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName, type CallerScope } from '@switchboard/contracts';
import { eventStreamConfig } from '@switchboard/service-kit';
import {
  createTestDatabase,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { connectionEvent, HOUR, messageEvent, MIN, participant, summarize, UsageHarness } from './usage-harness.js';

const DAY = 24 * HOUR;
const ORG = 'org-prune';
const APP = 'app-prune';
const scope: CallerScope = { organizationId: ORG, operator: false, principal: 'key-prune' };

interface Setup {
  h: UsageHarness;
  service: SpawnedService;
  close(): Promise<void>;
}

/** An aggregator on a fresh namespace and database; `streamMaxAgeMs` creates the stream first with that max age. */
async function setup(label: string, env: Record<string, string>, streamMaxAgeMs?: number): Promise<Setup> {
  const servers = testServers();
  const ns = testNamespace(label);
  const db: TestDatabase = await createTestDatabase(label);
  const nc: NatsConnection = await connect({ servers: servers.natsUrl });
  const jsm = await jetstreamManager(nc);
  if (streamMaxAgeMs !== undefined) {
    await jsm.streams.add({ ...eventStreamConfig(ns), max_age: nanos(streamMaxAgeMs) });
  }
  const service = await spawnService('usage-aggregator', {
    ...serviceTestEnv(ns, db.url),
    HTTP_PORT: String(await freePort()),
    USAGE_PRUNE_INTERVAL_MS: '200',
    ...env,
  });
  const h = new UsageHarness(nc, ns, db.url);
  return {
    h,
    service,
    async close() {
      await service.stop();
      await jsm.streams.delete(eventStreamName(ns)).catch(() => undefined);
      await nc.close();
      await flushRedisPrefix(servers.redisUrl, `${ns}:`);
      await db.drop();
    },
  };
}

async function seedProcessed(h: UsageHarness, rows: Record<string, number>): Promise<void> {
  for (const [id, processedOn] of Object.entries(rows))
    await h.sql('INSERT INTO usage.processed_event (event_id, processed_on) VALUES ($1, $2)', [id, processedOn]);
}

/** A connection row of `app-seed` with the given times (null: not seen). */
async function seedConnection(
  h: UsageHarness,
  id: string,
  t: { connectedAt: number | null; endedAt: number | null; modifiedOn: number },
): Promise<void> {
  await h.sql(
    `INSERT INTO usage.connection (application_id, channel_id, user_id, device_id, client_id, connection_id, organization_id, connected_at, ended_at, max_pixel_count, modified_on)
     VALUES ('app-seed', 'room', 'u', 'd', 'c', $1, $2, $3, $4, 0, $5)`,
    [id, ORG, t.connectedAt, t.endedAt, t.modifiedOn],
  );
}

async function processedIds(h: UsageHarness, ids: string[]): Promise<string[]> {
  return (
    await h.sql<{ event_id: string }>(
      'SELECT event_id FROM usage.processed_event WHERE event_id = ANY($1) ORDER BY 1',
      [ids],
    )
  ).map((r) => r.event_id);
}

async function connectionIds(h: UsageHarness): Promise<string[]> {
  return (
    await h.sql<{ connection_id: string }>(
      `SELECT connection_id FROM usage.connection WHERE application_id = 'app-seed' ORDER BY 1`,
    )
  ).map((r) => r.connection_id);
}

describe('usage-aggregator pruning', () => {
  describe('with the contract stream (7 days) and a retention setting shorter than that', () => {
    let s: Setup;
    beforeAll(async () => {
      s = await setup('prune7', { USAGE_LEDGER_RETENTION_SECONDS: '1' });
    });
    afterAll(async () => s?.close());

    it('deletes only what JetStream can no longer redeliver and nothing can change; redelivered events stay duplicates', async () => {
      const { h } = s;
      const now = Date.now();
      // A real session, applied: its event ids must keep working as idempotency keys.
      const alice = participant(APP, ORG, 'alice', true);
      const start = now - (now % HOUR) - 2 * HOUR;
      const session = [
        connectionEvent('connection.connected', alice, start + 10 * MIN, { width: 1280, height: 720 }),
        messageEvent('channel.client.message', alice, start + 20 * MIN),
        connectionEvent('connection.closed', alice, start + 40 * MIN),
      ];
      await h.publishAll(session);
      await h.drained();
      const usage = summarize(await h.query(scope, APP, start, start + HOUR));
      expect(usage).toEqual({ [new Date(start).toISOString()]: { messages: 1, minutes: { 921600: 30 } } });

      // Aged rows: younger than the stream's 7 days (kept although older than the 1 s setting) and older.
      await h.sql('UPDATE usage.processed_event SET processed_on = $1', [now - 6 * DAY]);
      await h.sql('UPDATE usage.connection SET modified_on = $1', [now - 6 * DAY]);
      await seedProcessed(h, { 'old-event': now - 7 * DAY - HOUR, 'young-event': now - 7 * DAY + HOUR });
      await seedConnection(h, 'ended-old', {
        connectedAt: now - 9 * DAY,
        endedAt: now - 8 * DAY,
        modifiedOn: now - 8 * DAY,
      });
      await seedConnection(h, 'never-connected-old', { connectedAt: null, endedAt: null, modifiedOn: now - 8 * DAY });
      await seedConnection(h, 'ended-young', {
        connectedAt: now - 7 * DAY,
        endedAt: now - 6 * DAY,
        modifiedOn: now - 6 * DAY,
      });
      await seedConnection(h, 'ended-old-changed-lately', {
        connectedAt: now - 9 * DAY,
        endedAt: now - 8 * DAY,
        modifiedOn: now - DAY,
      });
      await seedConnection(h, 'open-old', { connectedAt: now - 30 * DAY, endedAt: null, modifiedOn: now - 30 * DAY });
      await h.sql(
        `INSERT INTO usage.hourly_minutes (application_id, organization_id, hour_start, max_pixel_count, participant_ms) VALUES ('app-seed', $1, $2, 0, 60000)`,
        [ORG, now - (now % HOUR) - 40 * DAY],
      );

      // Every row the pruner must delete (a pass may run between two of the inserts above: waiting
      // for one of them alone is not waiting for the others).
      const prunable = ['ended-old', 'never-connected-old'];
      await waitFor(
        async () =>
          (await processedIds(h, ['old-event'])).length === 0 &&
          !(await connectionIds(h)).some((id) => prunable.includes(id)),
        {
          timeoutMs: 30000,
          intervalMs: 100,
          description: 'the pruner to delete the rows older than 7 days',
        },
      );
      expect(await processedIds(h, ['old-event', 'young-event'])).toEqual(['young-event']);
      expect(await connectionIds(h)).toEqual(['ended-old-changed-lately', 'ended-young', 'open-old']);
      expect(
        await h.sql(`SELECT participant_ms::int AS ms FROM usage.hourly_minutes WHERE application_id = 'app-seed'`),
      ).toEqual([{ ms: 60000 }]);

      // The session's ids (6 days old) are still known: replaying its events changes nothing.
      const before = await h.ledger();
      await h.publishAll(session, (e) => `${e.event.id}#again`);
      await h.drained();
      expect(await h.ledger()).toEqual(before);
      expect(summarize(await h.query(scope, APP, start, start + HOUR))).toEqual(usage);
    }, 90000);
  });

  describe('with a live stream that keeps events longer (30 days)', () => {
    let s: Setup;
    beforeAll(async () => {
      s = await setup('prune30', {}, 30 * DAY);
    });
    afterAll(async () => s?.close());

    it('keeps processed ids and settled connections until the live stream can no longer deliver their events', async () => {
      const { h } = s;
      await h.drained();
      const now = Date.now();
      await seedProcessed(h, { 'event-8d': now - 8 * DAY, 'event-31d': now - 31 * DAY });
      await seedConnection(h, 'ended-8d', {
        connectedAt: now - 9 * DAY,
        endedAt: now - 8 * DAY,
        modifiedOn: now - 8 * DAY,
      });
      await seedConnection(h, 'ended-31d', {
        connectedAt: now - 32 * DAY,
        endedAt: now - 31 * DAY,
        modifiedOn: now - 31 * DAY,
      });
      await waitFor(
        async () =>
          (await processedIds(h, ['event-31d'])).length === 0 && !(await connectionIds(h)).includes('ended-31d'),
        {
          timeoutMs: 30000,
          intervalMs: 100,
          description: 'the pruner to delete the rows older than 30 days',
        },
      );
      expect(await processedIds(h, ['event-8d', 'event-31d'])).toEqual(['event-8d']);
      expect(await connectionIds(h)).toEqual(['ended-8d']);
    }, 90000);
  });
});
