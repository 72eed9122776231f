import type { DataSource } from 'typeorm';
import { ApiKeysService, hashKey } from './api-keys.service.js';

function fakeDataSource(
  rows: Record<string, { id: string; organization_id: string; operator: boolean; disabled: boolean }>,
) {
  const lookups: string[] = [];
  const ds = {
    query: async (_sql: string, [keyHash]: [string]) => {
      lookups.push(keyHash);
      return rows[keyHash] ? [rows[keyHash]] : [];
    },
  } as unknown as DataSource;
  return { ds, lookups };
}

describe('ApiKeysService.verify', () => {
  const value = 'sb_example-key-value-123';
  const rows = { [hashKey(value)]: { id: 'key-1', organization_id: 'org-1', operator: false, disabled: false } };

  it('looks keys up by their SHA-256 hash, every time without a cache', async () => {
    const { ds, lookups } = fakeDataSource(rows);
    const keys = new ApiKeysService(ds);
    expect(await keys.verify(value)).toEqual({
      keyId: 'key-1',
      organizationId: 'org-1',
      operator: false,
      organizationDisabled: false,
    });
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

  it('drops the remembered verdicts of an organization when told it changed', async () => {
    const { ds, lookups } = fakeDataSource(rows);
    const keys = new ApiKeysService(ds, { apiKeyCacheTtlMs: 60_000 });
    await keys.verify(value);
    keys.forgetOrganization('org-other');
    await keys.verify(value);
    expect(lookups).toEqual([hashKey(value)]);
    rows[hashKey(value)]!.disabled = true;
    keys.forgetOrganization('org-1');
    expect(await keys.verify(value)).toEqual({
      keyId: 'key-1',
      organizationId: 'org-1',
      operator: false,
      organizationDisabled: true,
    });
    expect(lookups).toEqual([hashKey(value), hashKey(value)]);
    rows[hashKey(value)]!.disabled = false;
  });
});
