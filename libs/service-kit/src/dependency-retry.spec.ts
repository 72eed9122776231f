import { retryWhileDependencyDown } from './dependency-retry.js';

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('retryWhileDependencyDown', () => {
  it('tries again while a dependency is down, keeping the work alive before each wait, then answers', async () => {
    let calls = 0;
    const kept: number[] = [];
    const told: number[] = [];
    const answer = await retryWhileDependencyDown(
      async () => {
        if (++calls < 3) throw down();
        return 'done';
      },
      { stopping: () => false, keepAlive: () => kept.push(calls), onRetry: (_e, tries) => told.push(tries) },
    );
    expect(answer).toBe('done');
    expect(calls).toBe(3);
    expect(kept).toEqual([1, 2]);
    expect(told).toEqual([1]);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    await expect(
      retryWhileDependencyDown(
        async () => {
          calls++;
          throw new Error('duplicate key value');
        },
        { stopping: () => false },
      ),
    ).rejects.toThrow('duplicate key value');
    expect(calls).toBe(1);
  });

  it('throws a dependency failure at once when stopping', async () => {
    let calls = 0;
    await expect(
      retryWhileDependencyDown(
        async () => {
          calls++;
          throw down();
        },
        { stopping: () => true },
      ),
    ).rejects.toThrow('ECONNREFUSED');
    expect(calls).toBe(1);
  });
});
