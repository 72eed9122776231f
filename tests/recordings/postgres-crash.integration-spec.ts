/**
 * recording-service while its PostgreSQL crashes: a server of the test's own (the run's shared one
 * serves every other suite) crashed in immediate mode while the service applies a backlog of
 * connection events, then started again (recovery from its WAL). The service keeps running (nothing
 * restarts it here); once it has caught up every event is applied once and in order: each connection
 * recording closed at its own close with its whole timeline, one channel recording, nothing left
 * open. (Events handed back during the outage used to come again after later ones: a close applied
 * before its connect left the recording open.)
 */
import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { eventStreamName, type DomainEvent } from '@switchboard/contracts';
import { startOwnPostgres, testNamespace, waitFor, type OwnPostgres } from '@switchboard/testing';
import { connectionEvent, publish, query, scopeOf, simConnection, startHarness, type Harness } from './harness.js';

const ORG = `org-${randomUUID()}`;
const APP = 'pg-crash-app';
const CH = 'pg-crash-room';
const PEOPLE = 150;

describe('recording-service with its PostgreSQL crashed', () => {
  let postgres: OwnPostgres | undefined;
  let h: Harness | undefined;

  afterAll(async () => {
    await h?.close();
    await postgres?.stop();
  });

  it('crashed while applying a backlog, restarted: every event applied once, every recording closed with its timeline', async () => {
    postgres = await startOwnPostgres('recordings');
    const db = await postgres.createDatabase('recordings', ['recording-service']);
    h = await startHarness('recpg', {}, testNamespace('recpg'), db);
    const sql = async <T extends pg.QueryResultRow>(text: string): Promise<T[]> => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        return (await client.query<T>(text)).rows;
      } finally {
        await client.end();
      }
    };

    // Everyone connects, then mutes, then leaves, in one recording channel: one channel recording.
    const base = Date.now() - 60_000;
    const people = Array.from({ length: PEOPLE }, (_, i) =>
      simConnection({
        organizationId: ORG,
        applicationId: APP,
        channelId: CH,
        userId: `u${i}`,
        connectionId: `c${i}`,
        recording: true,
      }),
    );
    const events: DomainEvent[] = [
      ...people.map((c, i) => connectionEvent('connection.connected', c, base + i)),
      ...people.map((c, i) =>
        connectionEvent('connection.updated', Object.assign(c, { audioMuted: true }), base + 1000 + i),
      ),
      ...people.map((c, i) =>
        connectionEvent('connection.closed', Object.assign(c, { state: 'closed' }), base + 2000 + i),
      ),
    ];
    // A backlog: the service attaches its consumer, stops, and the events wait in the stream.
    await h.start();
    await h.service.stop();
    await publish(h, events);
    await h.start();
    await waitFor(
      async () => (await sql<{ n: number }>('SELECT count(*)::int AS n FROM recording.processed_event'))[0]!.n >= 30,
      {
        timeoutMs: 30000,
        intervalMs: 5,
        description: 'the service to start on the backlog',
      },
    );
    const consumer = await (await jetstreamManager(h.nc)).consumers.info(eventStreamName(h.ns), 'recording-service');
    const backlog = consumer.num_pending + consumer.num_ack_pending;
    await postgres.crash();
    await new Promise((r) => setTimeout(r, 1500));
    await postgres.start();

    const scope = scopeOf(ORG);
    const closed = await waitFor(
      async () => {
        const list = await query(h!, scope, {
          kind: 'channel.connectionRecordings.list',
          applicationId: APP,
          channelId: CH,
          take: 1000,
        });
        return list.length === PEOPLE && list.every((c) => c.stopTimestamp !== null) ? list : null;
      },
      { timeoutMs: 90000, intervalMs: 250, description: `all ${PEOPLE} connection recordings closed` },
    );
    expect(backlog).toBeGreaterThan(0);
    for (const c of closed) {
      const i = Number(c.userId.slice(1));
      expect(c.stopTimestamp).toBe(new Date(base + 2000 + i).toISOString());
      expect(c.updates.map((u) => [u.index, u.audioMuted])).toEqual([
        [0, false],
        [1, true],
      ]);
    }
    expect(await query(h, scope, { kind: 'channel.recordings.count', applicationId: APP, channelId: CH })).toBe(1);
    const [{ n: processed }] = (await sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM recording.processed_event',
    )) as [{ n: number }];
    expect(processed).toBe(events.length);
    const [{ n: updates }] = (await sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM recording.recording_update',
    )) as [{ n: number }];
    expect(updates).toBe(2 * PEOPLE);
  }, 150000);
});
