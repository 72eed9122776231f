import { changedApplicationId, changedOrganizationId } from './application-changes.js';

describe('changedApplicationId', () => {
  it("reads Nest's packet shape and the bare shape, from bytes or text", () => {
    const packet = JSON.stringify({ pattern: 'management-api.v1.applications.changed', data: { applicationId: 'a1' } });
    expect(changedApplicationId(packet)).toBe('a1');
    expect(changedApplicationId(new TextEncoder().encode(packet))).toBe('a1');
    expect(changedApplicationId(JSON.stringify({ applicationId: 'a2' }))).toBe('a2');
  });
  it('is undefined for anything else', () => {
    expect(changedApplicationId('nope')).toBeUndefined();
    expect(changedApplicationId(JSON.stringify({ data: {} }))).toBeUndefined();
    expect(changedApplicationId(JSON.stringify({ applicationId: '' }))).toBeUndefined();
    expect(changedApplicationId('null')).toBeUndefined();
  });
});

describe('changedOrganizationId', () => {
  it('reads the organization id of an organizations.changed packet, and nothing from an application notice', () => {
    const packet = JSON.stringify({
      pattern: 'management-api.v1.organizations.changed',
      data: { organizationId: 'o1' },
    });
    expect(changedOrganizationId(new TextEncoder().encode(packet))).toBe('o1');
    expect(changedOrganizationId(JSON.stringify({ organizationId: 'o2' }))).toBe('o2');
    expect(changedOrganizationId(JSON.stringify({ data: { applicationId: 'a1' } }))).toBeUndefined();
  });
});
