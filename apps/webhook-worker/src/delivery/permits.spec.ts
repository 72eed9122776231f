import { Permits } from './permits.js';

describe('Permits', () => {
  it('lets at most `count` holders through, the others in arrival order as permits come back', async () => {
    const permits = new Permits(2);
    const order: number[] = [];
    expect(permits.exhausted).toBe(false);
    const holders = [1, 2, 3, 4].map((n) => permits.acquire().then(() => order.push(n)));
    expect(permits.exhausted).toBe(true);
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual([1, 2]);
    permits.release();
    await holders[2];
    expect(order).toEqual([1, 2, 3]);
    permits.release();
    await holders[3];
    expect(order).toEqual([1, 2, 3, 4]);
    // Every permit back: two holders at once again, not three.
    permits.release();
    permits.release();
    const again: number[] = [];
    [5, 6, 7].forEach((n) => void permits.acquire().then(() => again.push(n)));
    await Promise.resolve();
    await Promise.resolve();
    expect(again).toEqual([5, 6]);
  });
});
