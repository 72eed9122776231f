import { Type } from '@sinclair/typebox';
import { Int64 } from '../interface-a/record-schema.js';
import { ContractViolation, validator } from './validate.js';
import { CHECKED_SEPARATELY_KEYWORD, findMalformedText, malformedText, printable } from './well-formed.js';

const NUL = 'must not contain U+0000 (NUL)';
const SURROGATE = 'must be well-formed Unicode (no lone surrogate)';

describe('malformedText', () => {
  it('accepts ordinary text, astral characters (emoji as a surrogate pair) and the empty string', () => {
    for (const text of ['', 'hello', 'grüße', '日本語', '\u{1F600} party', 'a\u{10FFFF}b', '\uFFFD', 'tab\tnew\nline'])
      expect(malformedText(text)).toBeUndefined();
  });

  it('refuses U+0000 anywhere', () => {
    for (const text of ['\u0000', 'x\u0000y', 'end\u0000']) expect(malformedText(text)).toBe(NUL);
  });

  it('refuses a lone high surrogate and a lone low surrogate, and a pair in the wrong order', () => {
    for (const text of ['\ud800', 'x\udbffy', '\udc00', 'a\udfff', '\ude00\ud83d', '\u{1F600}'.slice(0, 1)])
      expect(malformedText(text)).toBe(SURROGATE);
  });
});

describe('findMalformedText', () => {
  it('is undefined for values without bad text, whatever their shape', () => {
    expect(findMalformedText({ a: ['x', 1, null, true, { b: '\u{1F600}' }], c: {} })).toBeUndefined();
    expect(findMalformedText(42)).toBeUndefined();
    expect(findMalformedText(null)).toBeUndefined();
  });

  it('names the field by its dotted path, through nested arrays and objects', () => {
    expect(findMalformedText({ message: 'x\u0000y' })).toEqual({ field: 'message', message: NUL });
    expect(findMalformedText({ channels: [{ id: 'ok' }, { id: 'b\ud800' }] })).toEqual({
      field: 'channels[1].id',
      message: SURROGATE,
    });
    expect(findMalformedText({ grid: [['a'], ['b', '\udc00']] })).toEqual({ field: 'grid[1][1]', message: SURROGATE });
    expect(findMalformedText('\u0000')).toEqual({ field: '', message: NUL });
  });

  it('checks object keys and names the object holding the bad key (not the key itself)', () => {
    expect(findMalformedText({ tags: { 'a\u0000b': 'x' } })).toEqual({
      field: 'tags',
      message: 'has a field name containing U+0000 (NUL)',
    });
    expect(findMalformedText({ '\ud800': 1 })).toEqual({
      field: '',
      message: 'has a field name that is not well-formed Unicode (lone surrogate)',
    });
  });

  it('printable replaces the bad characters so an error can echo the text', () => {
    expect(printable('a\u0000b\ud800c\u{1F600}')).toBe('a\uFFFDb\uFFFDc\u{1F600}');
  });
});

describe('validator and storable text', () => {
  const Body = Type.Object(
    {
      message: Type.String({ maxLength: 100 }),
      channels: Type.Optional(Type.Array(Type.Object({ id: Type.String() }, { additionalProperties: false }))),
      attributes: Type.Optional(Type.Record(Type.String(), Type.String())),
      at: Type.Optional(Int64()),
    },
    { additionalProperties: false, $id: 'MessageBody' },
  );
  const v = validator(Body);

  it('accepts well-formed text including emoji', () => {
    expect(v.check({ message: 'hi \u{1F44B}', channels: [{ id: 'room-\u{1F600}' }] })).toBe(true);
    expect(v.errors({ message: 'hi \u{1F44B}' })).toEqual([]);
  });

  it('check, errors and parse refuse NUL and lone surrogates naming the field', () => {
    for (const [value, field, message] of [
      [{ message: 'x\u0000y' }, 'message', NUL],
      [{ message: '\ud800' }, 'message', SURROGATE],
      [{ message: 'ok', channels: [{ id: '\udc00' }] }, 'channels[0].id', SURROGATE],
      [{ message: 'ok', attributes: { k: 'v\u0000' } }, 'attributes.k', NUL],
      [{ message: 'ok', attributes: { 'k\u0000': 'v' } }, 'attributes', 'has a field name containing U+0000 (NUL)'],
    ] as const) {
      expect(v.check(value)).toBe(false);
      expect(v.errors(value)).toEqual([{ field, message }]);
      expect(() => v.parse(value)).toThrow(ContractViolation);
    }
  });

  it('reports schema errors first, with an unknown bad key echoed only in printable form', () => {
    expect(v.errors({ message: 1 }).map((e) => e.field)).toEqual(['message']);
    expect(v.errors({ message: 'ok', 'x\u0000': 1 })).toEqual([{ field: 'x\uFFFD', message: 'unknown field' }]);
  });

  it('keeps int64 fields to integers JSON can carry exactly', () => {
    expect(v.check({ message: 'ok', at: Number.MAX_SAFE_INTEGER })).toBe(true);
    expect(v.check({ message: 'ok', at: -Number.MAX_SAFE_INTEGER })).toBe(true);
    expect(v.errors({ message: 'ok', at: 9223372036854775808 }).map((e) => e.field)).toEqual(['at']);
    expect(v.errors({ message: 'ok', at: Number.MAX_SAFE_INTEGER + 1 }).map((e) => e.field)).toEqual(['at']);
  });
});

describe('properties checked separately', () => {
  const Frame = Type.Object(
    { id: Type.String(), data: Type.Optional(Type.Unknown({ [CHECKED_SEPARATELY_KEYWORD]: true })) },
    { additionalProperties: false, $id: 'Frame' },
  );
  const v = validator(Frame);

  it('leaves a marked property to its own validator and still checks the others', () => {
    expect(v.check({ id: 'a', data: { message: 'x\u0000' } })).toBe(true);
    expect(v.errors({ id: 'a\u0000', data: {} })).toEqual([{ field: 'id', message: NUL }]);
  });
});
