import { changedApplicationId } from './application-changes.js';

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
