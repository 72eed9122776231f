import type { DataSource } from 'typeorm';
import { KNOWN_ORGANIZATION_TTL_MS, KnownOrganizations } from './known-organizations.js';

const ORG = '6f1c7d3e-2b4a-4c8e-9f10-1234567890ab';

function fakeDataSource(existing: Set<string>, disabled = new Set<string>()) {
  const lookups: unknown[] = [];
  const ds = {
    query: async (_sql: string, params: unknown[]) => {
      lookups.push(params[0]);
      return existing.has(params[0] as string) ? [{ disabled: disabled.has(params[0] as string) }] : [];
    },
  } as unknown as DataSource;
  return { ds, lookups };
}

describe('KnownOrganizations', () => {
  const realNow = Date.now;
  let now = 1_000_000;
  beforeEach(() => {
    Date.now = () => now;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  it('never asks the database about a claim that is not an organization id', async () => {
    const { ds, lookups } = fakeDataSource(new Set([ORG]));
    const known = new KnownOrganizations(ds);
    for (const claim of ['not-a-uuid', "x' OR '1'='1", '', `${ORG}x`]) expect(await known.resolve(claim)).toBeNull();
    expect(lookups).toEqual([]);
  });

  it('answers the stored (lower-case) id, remembers an organization found for a short while, and asks again about one not found', async () => {
    const existing = new Set([ORG]);
    const { ds, lookups } = fakeDataSource(existing);
    const known = new KnownOrganizations(ds);
    expect(await known.resolve(ORG.toUpperCase())).toEqual({ id: ORG, disabled: false });
    expect(await known.resolve(ORG)).toEqual({ id: ORG, disabled: false });
    expect(lookups).toEqual([ORG]);

    const later = '00000000-0000-4000-8000-000000000000';
    expect(await known.resolve(later)).toBeNull();
    existing.add(later);
    expect(await known.resolve(later)).toEqual({ id: later, disabled: false });
    expect(lookups).toEqual([ORG, later, later]);

    now += KNOWN_ORGANIZATION_TTL_MS + 1;
    expect(await known.resolve(ORG)).toEqual({ id: ORG, disabled: false });
    expect(lookups).toEqual([ORG, later, later, ORG]);
  });

  it('asks again about a disabled organization each time, and about one forgotten after a change notice', async () => {
    const disabled = new Set<string>();
    const { ds, lookups } = fakeDataSource(new Set([ORG]), disabled);
    const known = new KnownOrganizations(ds);
    expect(await known.resolve(ORG)).toEqual({ id: ORG, disabled: false });
    disabled.add(ORG);
    known.forget(ORG.toUpperCase());
    expect(await known.resolve(ORG)).toEqual({ id: ORG, disabled: true });
    disabled.delete(ORG);
    expect(await known.resolve(ORG)).toEqual({ id: ORG, disabled: false });
    expect(lookups).toEqual([ORG, ORG, ORG]);
  });
});
