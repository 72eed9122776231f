import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles from the shortest delay up to the longest one, and starts over after reset', () => {
    const backoff = new Backoff(100, 1000, () => 0.5);
    expect([1, 2, 3, 4, 5, 6].map(() => backoff.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it('spreads each delay by at most 20 % either way', () => {
    expect(new Backoff(1000, 1000, () => 0).next()).toBe(800);
    expect(new Backoff(1000, 1000, () => 0.999999).next()).toBe(1200);
  });
});
