import type { AttemptRow, DeliveryRepository } from './delivery.repository.js';
import { DeliveryLogWriter } from './delivery-log.writer.js';

/** The default `WEBHOOK_LOG_INTERVAL_MS`. */
const INTERVAL_5_MS = { logIntervalMs: 5 };
const row = (n: number) => ({ id: `a${n}`, deliveryId: `d${n}` }) as AttemptRow;

describe('DeliveryLogWriter', () => {
  it('writes rows recorded in the same turn together, and at once when idle', async () => {
    const statements: string[][] = [];
    const repo = {
      writeAttempts: async (rows: AttemptRow[]) => void statements.push(rows.map((r) => r.id)),
    } as unknown as DeliveryRepository;
    const w = new DeliveryLogWriter(repo, INTERVAL_5_MS);
    await Promise.all([w.record(row(1)), w.record(row(2)), w.record(row(3))]);
    await w.record(row(4));
    expect(statements).toEqual([['a1', 'a2', 'a3'], ['a4']]);
  });

  it('waits out the configured interval between statements while no sender waits', async () => {
    const starts: number[] = [];
    const repo = { writeAttempts: async () => void starts.push(performance.now()) } as unknown as DeliveryRepository;
    const w = new DeliveryLogWriter(repo, { logIntervalMs: 200 });
    expect(w.minIntervalMs).toBe(200);
    await w.record(row(1));
    await w.record(row(2));
    expect(starts).toHaveLength(2);
    // The second statement started no sooner than the interval after the first (timers may fire a little early).
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(190);
  });

  it('gathers rows while statements are in flight (at most 4 at once)', async () => {
    const statements: number[] = [];
    let inFlight = 0;
    let most = 0;
    const repo = {
      writeAttempts: async (rows: AttemptRow[]) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 20));
        statements.push(rows.length);
        inFlight--;
      },
    } as unknown as DeliveryRepository;
    const w = new DeliveryLogWriter(repo, INTERVAL_5_MS);
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < 50; i++) {
      all.push(w.record(row(i)));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    expect(most).toBeLessThanOrEqual(4);
    expect(statements.reduce((a, b) => a + b, 0)).toBe(50);
    expect(statements.length).toBeLessThan(50);
  });

  it('expedite: rows senders wait for are written at once, not at the end of the interval, and back to back while they wait', async () => {
    // An interval no test waits for: a row written before it ends was expedited.
    const statements: string[][] = [];
    const held: Array<() => void> = [];
    const repo = {
      writeAttempts: (rows: AttemptRow[]) =>
        new Promise<void>((r) => {
          statements.push(rows.map((x) => x.id));
          held.push(r);
        }),
    } as unknown as DeliveryRepository;
    const turns = async (n = 5) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const w = new DeliveryLogWriter(repo, { logIntervalMs: 60_000 });
    const done: string[] = [];
    const record = (n: number) => w.record(row(n)).then(() => void done.push(`a${n}`));

    // Idle: the first row goes at once.
    const p1 = record(1);
    await turns();
    expect(statements).toEqual([['a1']]);
    // A row recorded now waits for the rest of the interval, even once the statement is done ...
    const p2 = record(2);
    held.shift()!();
    await p1;
    await turns();
    expect(statements).toEqual([['a1']]);
    // ... unless senders wait for it: then it goes at once.
    w.expedite();
    await turns();
    expect(statements).toEqual([['a1'], ['a2']]);

    // Senders waiting while a statement is in flight: the rows gathered meanwhile go as soon as it completes.
    const p3 = record(3);
    const p4 = record(4);
    w.expedite();
    await turns();
    expect(statements).toEqual([['a1'], ['a2']]);
    held.shift()!();
    await p2;
    await turns();
    expect(statements).toEqual([['a1'], ['a2'], ['a3', 'a4']]);
    held.shift()!();
    await Promise.all([p3, p4]);

    // Nobody waits any more: back to gathering for the interval.
    const p5 = record(5);
    await turns();
    expect(statements).toHaveLength(3);
    w.expedite();
    await turns();
    held.shift()!();
    await p5;
    expect(statements).toEqual([['a1'], ['a2'], ['a3', 'a4'], ['a5']]);
    expect(done).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('writes a failed group again until the database takes it; record never rejects; drain waits', async () => {
    let calls = 0;
    const written: string[] = [];
    const repo = {
      writeAttempts: async (rows: AttemptRow[]) => {
        calls++;
        if (calls <= 2) throw new Error('database down');
        written.push(...rows.map((r) => r.id));
      },
    } as unknown as DeliveryRepository;
    const w = new DeliveryLogWriter(repo, INTERVAL_5_MS);
    const p = w.record(row(1));
    await w.drain(5000);
    await p;
    expect(calls).toBe(3);
    expect(written).toEqual(['a1']);
  });
});
