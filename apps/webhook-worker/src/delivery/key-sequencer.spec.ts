import { KeySequencer } from './key-sequencer.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('KeySequencer', () => {
  it('runs tasks of one key one after the other, in order, even when an earlier one fails', async () => {
    const s = new KeySequencer();
    const log: string[] = [];
    const task =
      (name: string, ms: number, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await tick(ms);
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      s.run('k', 1, 0, task('a', 30, true)),
      s.run('k', 2, 1, task('b', 1)),
      s.run('k', 3, 2, task('c', 1)),
    ]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
  });

  it('starts the lowest order first among tasks that arrive in the same turn or while the key is busy', async () => {
    const s = new KeySequencer();
    const log: number[] = [];
    const task =
      (n: number, ms = 1) =>
      async () => {
        log.push(n);
        await tick(ms);
      };
    await Promise.all([s.run('k', 3, 0, task(3)), s.run('k', 1, 0, task(1)), s.run('k', 2, 0, task(2))]);
    expect(log).toEqual([1, 2, 3]);
    log.length = 0;
    const first = s.run('k', 10, 0, task(10, 20));
    await tick(5);
    await Promise.all([first, s.run('k', 13, 0, task(13)), s.run('k', 11, 0, task(11)), s.run('k', 12, 0, task(12))]);
    expect(log).toEqual([10, 11, 12, 13]);
  });

  it('waits while the check says the predecessor is still in progress, and runs it first when it arrives', async () => {
    const s = new KeySequencer({ recheckMs: 5 });
    const log: number[] = [];
    let checks = 0;
    const task = (n: number) => async () => {
      log.push(n);
    };
    const late = s.run('k', 8, 5, task(8), async () => {
      checks++;
      return true;
    });
    await tick(40);
    expect(log).toEqual([]);
    expect(checks).toBeGreaterThan(1);
    await Promise.all([late, s.run('k', 5, 0, task(5))]);
    expect(log).toEqual([5, 8]);
  });

  it('does not wait for a predecessor that already ran here, that the check says is done, or after maxWaitMs', async () => {
    const s = new KeySequencer({ maxWaitMs: 30, recheckMs: 5 });
    const log: number[] = [];
    const task = (n: number) => async () => {
      log.push(n);
    };
    let checked = false;
    await s.run('k', 5, 0, task(5));
    await s.run('k', 8, 5, task(8), async () => {
      checked = true;
      return true;
    });
    expect(checked).toBe(false);
    await s.run('k', 12, 10, task(12), async () => false); // done elsewhere
    const t1 = performance.now();
    await s.run('k', 20, 15, task(20), async () => true); // never comes
    expect(performance.now() - t1).toBeGreaterThanOrEqual(25);
    await s.run('k', 15, 12, task(15)); // late: runs at once, after 20
    expect(log).toEqual([5, 8, 12, 20, 15]);
  });

  it('runs tasks of different keys concurrently', async () => {
    const s = new KeySequencer();
    const log: string[] = [];
    const task = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await tick(ms);
      log.push(`end ${name}`);
    };
    await Promise.all([
      s.run('x', 1, 0, task('x1', 20)),
      s.run('y', 1, 0, task('y1', 1)),
      s.run('x', 2, 1, task('x2', 1)),
    ]);
    expect(log.indexOf('end y1')).toBeLessThan(log.indexOf('end x1'));
    expect(log.indexOf('start x2')).toBeGreaterThan(log.indexOf('end x1'));
  });

  it('a task that throws synchronously is a rejection and does not block the key; idle keys are trimmed', async () => {
    const s = new KeySequencer({ maxKeys: 10 });
    await expect(
      s.run('k', 1, 0, () => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    await expect(s.run('k', 2, 1, async () => 'ok')).resolves.toBe('ok');
    for (let i = 0; i < 30; i++) await s.run(`key-${i}`, 1, 0, async () => undefined);
    expect(s.size).toBeLessThanOrEqual(10);
  });
});
