import { dataSourceOptions } from '@switchboard/persistence';
import { createTestDatabase, type TestDatabase } from '@switchboard/testing';
import { DataSource } from 'typeorm';
import { persistenceOptions } from '../persistence.js';
import type { ConnectionFact, ConnectionKey } from './event-reader.js';
import { UsageLedger } from './usage-ledger.js';

const H = Date.UTC(2025, 2, 1, 10);
const MIN = 60_000;

describe('UsageLedger with two replicas writing at once', () => {
  let db: TestDatabase;
  let a: DataSource;
  let b: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('ledger');
    a = await new DataSource(dataSourceOptions(persistenceOptions(db.url, 4))).initialize();
    b = await new DataSource(dataSourceOptions(persistenceOptions(db.url, 4))).initialize();
  });

  afterAll(async () => {
    await a?.destroy();
    await b?.destroy();
    await db?.drop();
  });

  const key = (n: number): ConnectionKey => ({
    applicationId: 'app',
    channelId: 'room',
    userId: `u${n}`,
    deviceId: `d${n}`,
    clientId: `c${n}`,
    connectionId: `conn${n}`,
  });
  const fact = (
    eventId: string,
    n: number,
    seen: Partial<Pick<ConnectionFact, 'connectedAt' | 'endedAt' | 'maxPixelCount'>>,
  ): ConnectionFact => ({
    kind: 'connection',
    eventId,
    applicationId: 'app',
    organizationId: 'org',
    connection: key(n),
    ...seen,
  });

  it('applies an event delivered to both once: one applies it, the other finds it done', async () => {
    const event = fact('evt-same', 0, { connectedAt: H });
    const outcomes = await Promise.all([new UsageLedger(a).apply(event), new UsageLedger(b).apply(event)]);
    expect(outcomes.sort()).toEqual(['applied', 'duplicate']);
  });

  it('books the same totals when the events of many connections are applied concurrently, in any order, twice', async () => {
    const events: ConnectionFact[] = [];
    for (let n = 1; n <= 20; n++) {
      events.push(fact(`c-${n}`, n, { connectedAt: H + n * MIN }));
      events.push(fact(`s-${n}`, n, { maxPixelCount: n % 2 ? 921_600 : 230_400 }));
      events.push(fact(`e-${n}`, n, { endedAt: H + 50 * MIN + n * MIN }));
    }
    const shuffled = [...events]
      .sort((x, y) => (x.eventId.split('-')[1]! < y.eventId.split('-')[1]! ? -1 : 1))
      .reverse();
    const ledgers = [new UsageLedger(a), new UsageLedger(b)];
    await Promise.all([...shuffled, ...events].map((e, i) => ledgers[i % 2]!.apply(e)));
    const rows = (await a.query(
      `SELECT hour_start::text AS hour, max_pixel_count::int AS px, participant_ms::text AS ms FROM usage.hourly_minutes WHERE participant_ms <> 0 ORDER BY 1, 2`,
    )) as Array<{ hour: string; px: number; ms: string }>;
    // Connection n: H + n min .. H + 50 + n min, i.e. (60 - n) min in hour 10 and (n - 10) min in hour 11 when n > 10.
    const expected = new Map<string, number>();
    for (let n = 1; n <= 20; n++) {
      const px = n % 2 ? 921_600 : 230_400;
      const add = (hour: number, min: number) =>
        min > 0 && expected.set(`${hour}:${px}`, (expected.get(`${hour}:${px}`) ?? 0) + min * MIN);
      add(H, Math.min(60, 50 + n) - n);
      add(H + 3_600_000, 50 + n - 60);
    }
    expect(rows.map((r) => [`${r.hour}:${r.px}`, Number(r.ms)])).toEqual(
      [...expected].sort(([x], [y]) => (x < y ? -1 : 1)),
    );
  });
});
