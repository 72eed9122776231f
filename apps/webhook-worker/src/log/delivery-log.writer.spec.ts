import type { AttemptRow, DeliveryRepository } from './delivery.repository.js';
import { DeliveryLogWriter } from './delivery-log.writer.js';

const row = (n: number) => ({ id: `a${n}`, deliveryId: `d${n}` }) as AttemptRow;

describe('DeliveryLogWriter', () => {
  it('writes rows recorded in the same turn together, and at once when idle', async () => {
    const statements: string[][] = [];
    const repo = { writeAttempts: async (rows: AttemptRow[]) => void statements.push(rows.map((r) => r.id)) } as unknown as DeliveryRepository;
    const w = new DeliveryLogWriter(repo);
    await Promise.all([w.record(row(1)), w.record(row(2)), w.record(row(3))]);
    await w.record(row(4));
    expect(statements).toEqual([['a1', 'a2', 'a3'], ['a4']]);
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
    const w = new DeliveryLogWriter(repo);
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
    const w = new DeliveryLogWriter(repo);
    const p = w.record(row(1));
    await w.drain(5000);
    await p;
    expect(calls).toBe(3);
    expect(written).toEqual(['a1']);
  });
});
