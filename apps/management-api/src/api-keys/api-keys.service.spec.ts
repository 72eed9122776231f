import type { DataSource } from 'typeorm';
import { ApiKeysService, hashKey } from './api-keys.service.js';

function fakeDataSource(rows: Record<string, { id: string; organizationId: string; operator: boolean }>) {
  const lookups: string[] = [];
  const ds = {
    getRepository: () => ({
      findOne: async ({ where }: { where: { keyHash: string } }) => {
        lookups.push(where.keyHash);
        return rows[where.keyHash] ?? null;
      },
    }),
  } as unknown as DataSource;
  return { ds, lookups };
}

describe('ApiKeysService.verify', () => {
  const value = 'sb_example-key-value-123';
  const rows = { [hashKey(value)]: { id: 'key-1', organizationId: 'org-1', operator: false } };

  it('looks keys up by their SHA-256 hash, every time without a cache', async () => {
    const { ds, lookups } = fakeDataSource(rows);
    const keys = new ApiKeysService(ds);
    expect(await keys.verify(value)).toEqual({ keyId: 'key-1', organizationId: 'org-1', operator: false });
    expect(await keys.verify(value)).not.toBeNull();
    expect(lookups).toEqual([hashKey(value), hashKey(value)]);
    expect(await keys.verify('short')).toBeNull();
    expect(await keys.verify('sb_unknown-key-value')).toBeNull();
  });

  it('remembers verified keys for API_KEY_CACHE_TTL_MS, never unknown ones', async () => {
    const { ds, lookups } = fakeDataSource(rows);
    const keys = new ApiKeysService(ds, { apiKeyCacheTtlMs: 60_000 });
    await keys.verify(value);
    await keys.verify(value);
    await keys.verify('sb_unknown-key-value');
    await keys.verify('sb_unknown-key-value');
    expect(lookups).toEqual([hashKey(value), hashKey('sb_unknown-key-value'), hashKey('sb_unknown-key-value')]);
  });
});
