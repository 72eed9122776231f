import { DomainError } from '@switchboard/contracts';
import { parseForwardedQuery } from './forwarded.js';
import { defineEntityModel } from './model.js';

const attempt = defineEntityModel({
  name: 'Attempt',
  key: 'id',
  table: 'a',
  properties: [
    { name: 'id', kind: 'guid', column: 'id' },
    { name: 'success', kind: 'boolean', column: 'success' },
  ],
});

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}

describe('parseForwardedQuery', () => {
  it('binds $expand to a record without navigation properties: * expands nothing, a name is UnknownProperty naming it', () => {
    for (const single of [false, true]) {
      expect(parseForwardedQuery({ $expand: '*', $select: 'id' }, attempt, single)).toMatchObject({
        expand: [],
        select: expect.any(Array),
      });
      const e = refusal(() => parseForwardedQuery({ $expand: 'nope' }, attempt, single));
      expect(e).toMatchObject({
        code: 'ValidationFailed',
        target: '$expand',
        details: [{ field: '$expand', message: expect.stringMatching(/^UnknownProperty: .*'nope'/) }],
      });
    }
  });

  it('refuses unknown names in the other options, and list options on a single read, naming the option', () => {
    expect(refusal(() => parseForwardedQuery({ $select: 'id,colour' }, attempt))).toMatchObject({
      target: '$select',
      details: [{ message: expect.stringMatching(/^UnknownProperty: /) }],
    });
    expect(refusal(() => parseForwardedQuery({ $top: '1' }, attempt, true))).toMatchObject({
      target: '$top',
      details: [{ field: '$top', message: expect.stringMatching(/^QuerySyntaxError: /) }],
    });
    expect(parseForwardedQuery({ $top: '1', $filter: 'success eq true' }, attempt).top).toBe(1);
    expect(parseForwardedQuery(undefined, attempt, true)).toMatchObject({ expand: [] });
  });
});
