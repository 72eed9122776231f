import { Type } from '@sinclair/typebox';
import { ContractViolation, toFieldPath, validator } from './validate.js';

/** What `action` throws (undefined when it returns). */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (e) {
    return e;
  }
  return undefined;
}

const Sample = Type.Object(
  {
    name: Type.Union([Type.String(), Type.Null()]),
    nested: Type.Optional(Type.Object({ count: Type.Number() }, { additionalProperties: false })),
    owner: Type.Optional(
      Type.Union([Type.Object({ ready: Type.Boolean() }, { additionalProperties: false }), Type.Null()]),
    ),
    list: Type.Optional(
      Type.Array(Type.Object({ x: Type.Integer() }, { additionalProperties: false }), { maxItems: 2 }),
    ),
  },
  { additionalProperties: false, $id: 'Sample' },
);

describe('validator', () => {
  const v = validator(Sample);

  it('accepts a valid value', () => {
    expect(v.check({ name: null, nested: { count: 1 }, list: [{ x: 1 }] })).toBe(true);
  });

  it('names an unknown field', () => {
    expect(v.errors({ name: 'a', surprise: 1 })).toEqual([{ field: 'surprise', message: 'unknown field' }]);
  });

  it('names a field with a wrong type, nested and in arrays', () => {
    const errors = v.errors({ name: 1, nested: { count: 'x' }, list: [{ x: 1 }, { x: 1.5 }] });
    expect(errors.map((e) => e.field)).toEqual(expect.arrayContaining(['name', 'nested.count', 'list[1].x']));
    expect(errors.find((e) => e.field === 'name')?.message).toBe('must be string or null');
  });

  it('names the field inside a nullable object', () => {
    expect(v.errors({ name: 'a', owner: { ready: 'yes' } })).toEqual([
      { field: 'owner.ready', message: 'expected boolean' },
    ]);
    expect(v.errors({ name: 'a', owner: { ready: true, extra: 1 } })).toEqual([
      { field: 'owner.extra', message: 'unknown field' },
    ]);
    expect(v.errors({ name: 'a', owner: 3 })).toEqual([{ field: 'owner', message: 'must be object or null' }]);
  });

  it('reports a max-items violation on the array field', () => {
    expect(v.errors({ name: 'a', list: [{ x: 1 }, { x: 2 }, { x: 3 }] })).toEqual([
      { field: 'list', message: 'must have at most 2 items' },
    ]);
  });

  it('parse throws a ContractViolation listing every field', () => {
    expect(() => v.parse({ name: 1, other: true })).toThrow(ContractViolation);
    const violation = thrownBy(() => v.parse({ name: 1, other: true })) as ContractViolation;
    expect(violation.message).toContain('Sample');
    expect(violation.errors.map((x) => x.field).sort()).toEqual(['name', 'other']);
  });

  it('converts JSON pointers to field paths', () => {
    expect(toFieldPath('/a/0/b~1c')).toBe('a[0].b/c');
    expect(toFieldPath('')).toBe('');
  });
});
