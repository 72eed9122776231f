import { findApp, freePort, repoRoot, serviceTestEnv, testServers, waitFor } from './index.js';
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

describe('serviceTestEnv', () => {
  it("points a service at the run's NATS and Redis under its namespace, with its database when given", () => {
    const { natsUrl, redisUrl } = testServers();
    expect(serviceTestEnv('ns1')).toEqual({
      NATS_URL: natsUrl,
      NATS_NAMESPACE: 'ns1',
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: 'ns1:',
      LOG_LEVEL: 'warn',
    });
    expect(serviceTestEnv('ns2', 'postgres://db/x')).toMatchObject({
      NATS_NAMESPACE: 'ns2',
      REDIS_KEY_PREFIX: 'ns2:',
      DATABASE_URL: 'postgres://db/x',
    });
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
