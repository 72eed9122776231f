/**
 * webhook-worker's intake transaction against a real PostgreSQL: when it fails after it got its
 * transaction id, the error carries that id and what it wrote, and PostgreSQL says whether that
 * transaction committed (EventIntake queues its jobs if so, see commitKeepingOrder).
 */
import type { EventInfo, ResolvedWebhook } from '@switchboard/contracts';
import { isDependencyDown } from '@switchboard/service-kit';
import { createTestDatabase, type TestDatabase } from '@switchboard/testing';
import { DataSource } from 'typeorm';
import { planDeliveries, planJobs, type PlannedJob } from '../../apps/webhook-worker/src/intake/delivery-planner.js';
import { DeliveryRepository, UncertainIntake } from '../../apps/webhook-worker/src/log/delivery.repository.js';

const hook: ResolvedWebhook = {
  id: 'w',
  source: 'application',
  url: 'https://x.test/w',
  events: null,
  batch: false,
  reliable: true,
  disabled: false,
};
const event = (id: string): EventInfo =>
  ({
    id,
    timestamp: 1,
    origin: 'client',
    type: 'client.updated',
    forced: false,
    channel: null,
    client: null,
    connection: null,
    message: null,
  }) as EventInfo;
const jobsFor = (fresh: ReadonlySet<string>): PlannedJob[] =>
  planJobs(
    planDeliveries(
      [...fresh].map((id, i) => ({
        event: event(id),
        seq: i + 1,
        applicationId: 'app',
        organizationId: 'org',
        channelId: 'ch',
        webhooks: [hook],
      })),
    ),
    50,
  );

describe('webhook-worker intake transaction (PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let repository: DeliveryRepository;

  beforeAll(async () => {
    db = await createTestDatabase('intake');
    ds = await new DataSource({ type: 'postgres', url: db.url, poolSize: 3 }).initialize();
    repository = new DeliveryRepository(ds);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /**
   * The id of a transaction on a connection of its own (released unless left open), committed, rolled back or left
   * open.
   */
  async function transaction(end: 'open' | 'commit' | 'rollback') {
    const qr = ds.createQueryRunner();
    await qr.startTransaction();
    const [row] = (await qr.query(`SELECT pg_current_xact_id()::text AS xid`)) as Array<{ xid: string }>;
    if (end === 'commit') await qr.commitTransaction();
    if (end === 'rollback') await qr.rollbackTransaction();
    if (end !== 'open') await qr.release();
    return {
      xid: row!.xid,
      close: async () => (end === 'open' ? qr.rollbackTransaction().then(() => qr.release()) : undefined),
    };
  }
  const uncertain = (xid: string) =>
    new UncertainIntake(xid, { fresh: new Set(), jobs: [] }, new Error('Connection terminated unexpectedly'));

  it('reads the outcome of a transaction by its id: committed, aborted, in progress', async () => {
    const committed = await transaction('commit');
    const aborted = await transaction('rollback');
    const open = await transaction('open');
    try {
      expect(await repository.intakeStatus(uncertain(committed.xid))).toBe('committed');
      expect(await repository.intakeStatus(uncertain(aborted.xid))).toBe('aborted');
      expect(await repository.intakeStatus(uncertain(open.xid))).toBe('in progress');
    } finally {
      await Promise.all([committed, aborted, open].map((t) => t.close()));
    }
  });

  it('a commit that fails once the deliveries are being written is an UncertainIntake with its transaction id and plan; that transaction did not commit', async () => {
    // A delivery id PostgreSQL refuses (not a uuid) makes the deliveries' INSERT fail.
    const failing = (fresh: ReadonlySet<string>) =>
      jobsFor(fresh).map((j) => ({ ...j, deliveries: j.deliveries.map((d) => ({ ...d, id: 'not-a-uuid' })) }));
    const error = await repository.commitIntake(['u1', 'u2'], failing, Date.now()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UncertainIntake);
    const u = error as UncertainIntake;
    expect(u.xid).toMatch(/^\d+$/);
    expect([...u.written.fresh].sort()).toEqual(['u1', 'u2']);
    expect(u.written.jobs.flatMap((j) => j.deliveries)).toHaveLength(2);
    expect(await repository.intakeStatus(u)).toBe('aborted');
    // Nothing of it stayed: the same events are fresh for the next commit, which writes their deliveries.
    const done = await repository.commitIntake(['u1', 'u2'], jobsFor, Date.now());
    expect([...done.fresh].sort()).toEqual(['u1', 'u2']);
    const rows = (await ds.query(
      `SELECT count(*)::int AS n FROM webhook.delivery WHERE 'u1' = ANY(event_ids) OR 'u2' = ANY(event_ids)`,
    )) as Array<{ n: number }>;
    expect(rows[0]!.n).toBe(2);
    // And a second commit of the same events finds them processed and writes nothing.
    const again = await repository.commitIntake(['u1', 'u2'], jobsFor, Date.now());
    expect(again).toEqual({ fresh: new Set(), jobs: [] });
  });

  it('a transaction whose connection is cut under it fails with an error the intake reads as PostgreSQL being down (and tries again)', async () => {
    const error = await ds
      .transaction(async (m) => {
        const [row] = (await m.query(`SELECT pg_backend_pid() AS pid`)) as Array<{ pid: number }>;
        await ds.query(`SELECT pg_terminate_backend($1)`, [row!.pid]);
        // The connection's error event comes first (TypeORM then releases the transaction's query runner).
        await new Promise((r) => setTimeout(r, 200));
        await m.query(`SELECT 1`);
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(Error);
    expect(isDependencyDown(error)).toBe(true);
  });

  it('a commit that fails before it has anything to lose (no fresh event) is thrown as it is', async () => {
    await repository.commitIntake(['v1'], jobsFor, Date.now());
    await expect(
      repository.commitIntake(
        ['v1'],
        () => {
          throw new Error('planning failed');
        },
        Date.now(),
      ),
    ).resolves.toEqual({ fresh: new Set(), jobs: [] });
    const error = await repository
      .commitIntake(
        ['v2'],
        () => {
          throw new Error('planning failed');
        },
        Date.now(),
      )
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(UncertainIntake);
    expect((error as Error).message).toBe('planning failed');
  });
});
