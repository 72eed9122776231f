import { jsonArray } from './delivery.repository.js';

describe('jsonArray', () => {
  const row = (n: number) => ({
    n,
    text: `"quoted" ${n}`,
    list: [n, null],
    nested: { deep: n % 3 === 0 ? null : 'x' },
  });

  it.each([0, 1, 249, 250, 251, 500, 1234])('gives the JSON.stringify of %i rows, built in slices', async (count) => {
    const items = Array.from({ length: count }, (_, i) => i);
    const text = await jsonArray(items, row);
    expect(text).toBe(JSON.stringify(items.map(row)));
    expect(JSON.parse(text)).toHaveLength(count);
  });

  it('lets other work run between the slices of a large array', async () => {
    let ranMeanwhile = false;
    setImmediate(() => (ranMeanwhile = true));
    await jsonArray(
      Array.from({ length: 1000 }, (_, i) => i),
      row,
    );
    expect(ranMeanwhile).toBe(true);
  });
});
