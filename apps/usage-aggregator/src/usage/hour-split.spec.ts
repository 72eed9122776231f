import fc from 'fast-check';
import {
  ceilHour,
  contribution,
  contributionDelta,
  floorHour,
  HOUR_MS,
  mergeSpan,
  splitByHour,
  type ConnectionSpan,
} from './hour-split.js';

const T0 = Date.UTC(2025, 2, 1, 10, 0, 0); // 2025-03-01T10:00:00Z, an hour boundary
const MIN = 60_000;

/** Orders `[key, ms]` pairs by key (keys are unique on each side compared). */
const byKey = ([a]: [string, number], [b]: [string, number]): number => (a < b ? -1 : a > b ? 1 : 0);

describe('hour arithmetic', () => {
  it('floors and ceils to epoch hours', () => {
    expect(floorHour(T0)).toBe(T0);
    expect(floorHour(T0 + 1)).toBe(T0);
    expect(floorHour(T0 - 1)).toBe(T0 - HOUR_MS);
    expect(ceilHour(T0)).toBe(T0);
    expect(ceilHour(T0 + 1)).toBe(T0 + HOUR_MS);
  });

  it('splits a span at hour boundaries to the millisecond', () => {
    expect(splitByHour(T0 + 30 * MIN, T0 + 90 * MIN)).toEqual([
      { hourStart: T0, ms: 30 * MIN },
      { hourStart: T0 + HOUR_MS, ms: 30 * MIN },
    ]);
    expect(splitByHour(T0 + 59 * MIN + 59_999, T0 + HOUR_MS + 1)).toEqual([
      { hourStart: T0, ms: 1 },
      { hourStart: T0 + HOUR_MS, ms: 1 },
    ]);
    expect(splitByHour(T0, T0 + 3 * HOUR_MS).map((s) => s.ms)).toEqual([HOUR_MS, HOUR_MS, HOUR_MS]);
    expect(splitByHour(T0, T0)).toEqual([]);
    expect(splitByHour(T0 + 5, T0)).toEqual([]);
  });

  it('the parts always sum to the span', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.integer({ min: 0, max: 30 * HOUR_MS }), (start, length) => {
        const parts = splitByHour(start, start + length);
        expect(parts.reduce((a, p) => a + p.ms, 0)).toBe(length);
        for (const p of parts) expect(p.hourStart % HOUR_MS).toBe(0);
      }),
    );
  });
});

describe('connection contribution', () => {
  it('is nothing until the connection has a start and an end', () => {
    expect(contribution({ connectedAt: T0, endedAt: null, maxPixelCount: 5 })).toEqual([]);
    expect(contribution({ connectedAt: null, endedAt: T0, maxPixelCount: 5 })).toEqual([]);
    expect(contribution({ connectedAt: T0 + MIN, endedAt: T0, maxPixelCount: 5 })).toEqual([]);
  });

  it('moves all of a connection to a larger bucket when a larger frame shows up after the close', () => {
    const before: ConnectionSpan = { connectedAt: T0 + 30 * MIN, endedAt: T0 + 90 * MIN, maxPixelCount: 0 };
    const after = mergeSpan(before, { maxPixelCount: 921_600 });
    expect(contributionDelta(before, after)).toEqual([
      { hourStart: T0, maxPixelCount: 0, ms: -30 * MIN },
      { hourStart: T0, maxPixelCount: 921_600, ms: 30 * MIN },
      { hourStart: T0 + HOUR_MS, maxPixelCount: 0, ms: -30 * MIN },
      { hourStart: T0 + HOUR_MS, maxPixelCount: 921_600, ms: 30 * MIN },
    ]);
    expect(contributionDelta(after, mergeSpan(after, { maxPixelCount: 100 }))).toEqual([]);
  });

  it('books the same totals whatever order the observations arrive in, and twice the same changes nothing', () => {
    const observation = fc.record(
      {
        connectedAt: fc.integer({ min: 0, max: 10 * HOUR_MS }),
        endedAt: fc.integer({ min: 0, max: 10 * HOUR_MS }),
        maxPixelCount: fc.integer({ min: 0, max: 8_294_400 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc
          .array(observation, { maxLength: 8 })
          .chain((list) =>
            fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length })),
          ),
        ([observations, shuffled]) => {
          const run = (list: Array<Partial<ConnectionSpan>>) => {
            const booked = new Map<string, number>();
            let span: ConnectionSpan = { connectedAt: null, endedAt: null, maxPixelCount: 0 };
            for (const o of list) {
              const next = mergeSpan(span, o);
              for (const d of contributionDelta(span, next)) {
                const key = `${d.hourStart}:${d.maxPixelCount}`;
                booked.set(key, (booked.get(key) ?? 0) + d.ms);
              }
              span = next;
            }
            return { span, booked: [...booked].filter(([, ms]) => ms !== 0).sort(byKey) };
          };
          const a = run(observations);
          const b = run([...shuffled, ...shuffled]);
          expect(b).toEqual(a);
          const expected = contribution(a.span)
            .map((p): [string, number] => [`${p.hourStart}:${p.maxPixelCount}`, p.ms])
            .sort(byKey);
          expect(a.booked).toEqual(expected);
        },
      ),
    );
  });
});
