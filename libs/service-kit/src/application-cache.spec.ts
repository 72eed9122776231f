import { ApplicationCache } from './application-cache.js';

/** A load the test settles by hand, counting its calls. */
function loader<V>() {
  const calls: Array<{ resolve: (v: V) => void; reject: (e: unknown) => void }> = [];
  const load = () => new Promise<V>((resolve, reject) => calls.push({ resolve, reject }));
  return { load, calls };
}

describe('ApplicationCache', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 1_000_000));

  it('shares one load among concurrent look-ups and serves the answer for the TTL', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 1000, maxEntries: 10, now });
    const { load, calls } = loader<string>();
    const both = Promise.all([cache.get('a', 'k', load), cache.get('a', 'k', load)]);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve('v1');
    expect(await both).toEqual(['v1', 'v1']);
    clock = 1_000_000 + 1000;
    expect(await cache.get('a', 'k', load)).toBe('v1');
    expect(cache.ageOf('a', 'k')).toBe(1000);
    clock = 1_000_000 + 1001;
    const again = cache.get('a', 'k', load);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve('v2');
    expect(await again).toBe('v2');
  });

  it('loads a fresher copy when asked for one younger than the kept entry', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 60_000, maxEntries: 10, now });
    const { load, calls } = loader<string>();
    const first = cache.get('a', 'k', load);
    calls[0]!.resolve('old');
    await first;
    clock = 1_000_000 + 500;
    expect(await cache.get('a', 'k', load, 1000)).toBe('old');
    const fresher = cache.get('a', 'k', load, 100);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve('new');
    expect(await fresher).toBe('new');
  });

  it('keeps no failure: every waiting caller gets it, the next look-up loads again', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 1000, maxEntries: 10, now });
    const { load, calls } = loader<string>();
    const both = Promise.allSettled([cache.get('a', 'k', load), cache.get('a', 'k', load)]);
    calls[0]!.reject(new Error('down'));
    expect((await both).map((o) => o.status)).toEqual(['rejected', 'rejected']);
    const next = cache.get('a', 'k', load);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve('up');
    expect(await next).toBe('up');
  });

  it('drops every entry of an invalidated application, and only those', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 1000, maxEntries: 10, now });
    const { load, calls } = loader<string>();
    const loads = [cache.get('a', 'k1', load), cache.get('a', 'k2', load), cache.get('b', 'k1', load)];
    calls.forEach((c, i) => c.resolve(`v${i}`));
    await Promise.all(loads);
    cache.invalidate('a');
    expect([cache.ageOf('a', 'k1'), cache.ageOf('a', 'k2'), cache.ageOf('b', 'k1')]).toEqual([undefined, undefined, 0]);
    void cache.get('a', 'k1', load);
    expect(calls).toHaveLength(4);
  });

  it('does not keep an answer loaded while the application changed, and loads anew for look-ups after the change', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 1000, maxEntries: 10, now });
    const { load, calls } = loader<string>();
    const before = cache.get('a', 'k', load);
    cache.invalidate('a');
    const after = cache.get('a', 'k', load);
    expect(calls).toHaveLength(2);
    calls[0]!.resolve('stale');
    calls[1]!.resolve('fresh');
    expect([await before, await after]).toEqual(['stale', 'fresh']);
    expect(await cache.get('a', 'k', load)).toBe('fresh');
    expect(calls).toHaveLength(2);
  });

  it("tells a load whether it is still current: false once its application was invalidated, other applications' loads untouched", async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 1000, maxEntries: 10, now });
    const seen: Record<string, () => boolean> = {};
    const load = (name: string) => (current: () => boolean) => {
      seen[name] = current;
      return Promise.resolve(name);
    };
    const a = cache.get('a', 'k', load('a'));
    const b = cache.get('b', 'k', load('b'));
    expect(seen.a!()).toBe(true);
    cache.invalidate('a');
    expect(seen.a!()).toBe(false);
    expect(seen.b!()).toBe(true);
    await Promise.all([a, b]);
  });

  it('with a TTL of 0 keeps nothing but still shares a load', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 0, maxEntries: 10, now });
    const { load, calls } = loader<string>();
    const both = Promise.all([cache.get('a', 'k', load), cache.get('a', 'k', load)]);
    calls[0]!.resolve('v');
    await both;
    expect(cache.ageOf('a', 'k')).toBeUndefined();
    void cache.get('a', 'k', load);
    expect(calls).toHaveLength(2);
  });

  it('keeps at most maxEntries: the oldest entries of the application cached the longest ago go first', async () => {
    const cache = new ApplicationCache<string>({ ttlMs: 1000, maxEntries: 3, now });
    const keep = async (app: string, key: string) => {
      const { load, calls } = loader<string>();
      const p = cache.get(app, key, load);
      calls[0]!.resolve(`${app}/${key}`);
      await p;
    };
    await keep('a', '1');
    await keep('a', '2');
    await keep('b', '1');
    await keep('b', '2');
    expect(
      [cache.ageOf('a', '1'), cache.ageOf('a', '2'), cache.ageOf('b', '1'), cache.ageOf('b', '2')].map(
        (a) => a !== undefined,
      ),
    ).toEqual([false, true, true, true]);
    await keep('c', '1');
    expect(
      [cache.ageOf('a', '2'), cache.ageOf('b', '1'), cache.ageOf('b', '2'), cache.ageOf('c', '1')].map(
        (a) => a !== undefined,
      ),
    ).toEqual([false, true, true, true]);
  });
});
