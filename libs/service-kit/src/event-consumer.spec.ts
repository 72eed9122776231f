import { redeliveryDelayMs } from './event-parking.js';

describe('redeliveryDelayMs', () => {
  it('starts at the first delay, doubles with every delivery and stops at the bound', () => {
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => redeliveryDelayMs(n))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    expect(redeliveryDelayMs(3, 60_000, 500)).toBe(2000);
    // A delivery count JetStream never sends (0) is the first delay, not half of it.
    expect(redeliveryDelayMs(0)).toBe(1000);
  });
});
