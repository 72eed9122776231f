import { findApp, freePort, repoRoot, waitFor } from './index.js';
import fs from 'node:fs';
import path from 'node:path';

describe('waitFor', () => {
  it('resolves to the first value that is not false, null or undefined', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? { calls } : null), { intervalMs: 1 });
    expect(value).toEqual({ calls: 3 });
  });

  it('treats a throw as not yet', async () => {
    let calls = 0;
    await expect(
      waitFor(
        () => {
          if (++calls < 3) throw new Error('not yet');
          return true;
        },
        { intervalMs: 1 },
      ),
    ).resolves.toBe(true);
  });

  it('times out with the description and the last failure', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('still 0 rows');
        },
        { timeoutMs: 50, intervalMs: 5, description: 'the webhook delivery' },
      ),
    ).rejects.toThrow(/waiting for the webhook delivery; last time it threw: still 0 rows/);
    await expect(waitFor(() => false, { timeoutMs: 20, intervalMs: 5 })).rejects.toThrow(/it returned false/);
  });
});

describe('freePort', () => {
  it('never hands out the same port twice', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(20);
  });
});

describe('findApp', () => {
  it('finds the repository root', () => {
    expect(fs.existsSync(path.join(repoRoot(), 'libs', 'testing', 'package.json'))).toBe(true);
  });

  it('explains an unknown app', () => {
    expect(() => findApp('no-such-service')).toThrow(/No app named no-such-service \(known: /);
  });
});
