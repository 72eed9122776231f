import { ApplicationConfigUpdateBody } from '@switchboard/contracts';
import { MAX_STORED_LIST_LENGTH, MAX_STORED_STRING_LENGTH, nextState, readBody } from './bodies.js';

describe('request bodies', () => {
  it('drops server-managed fields and refuses unknown ones', () => {
    expect(readBody(ApplicationConfigUpdateBody, { id: 'x', organizationId: 'y', tag: 't' })).toEqual({ tag: 't' });
    expect(() => readBody(ApplicationConfigUpdateBody, { colour: 'red' })).toThrow('colour: unknown field');
  });

  it('refuses strings and lists over the stored limits, naming the field, before a megabyte reaches the database', () => {
    expect(readBody(ApplicationConfigUpdateBody, { tag: 'x'.repeat(MAX_STORED_STRING_LENGTH) })).toEqual({
      tag: 'x'.repeat(MAX_STORED_STRING_LENGTH),
    });
    expect(() => readBody(ApplicationConfigUpdateBody, { tag: 'x'.repeat(MAX_STORED_STRING_LENGTH + 1) })).toThrow(
      expect.objectContaining({ target: 'tag' }),
    );
    expect(() => readBody(ApplicationConfigUpdateBody, { webhooks: [{ url: 'x'.repeat(1_000_000) }] })).toThrow(
      expect.objectContaining({ target: 'webhooks[0].url' }),
    );
    expect(() =>
      readBody(ApplicationConfigUpdateBody, {
        webhooks: Array.from({ length: MAX_STORED_LIST_LENGTH + 1 }, () => ({})),
      }),
    ).toThrow(expect.objectContaining({ target: 'webhooks' }));
    expect(() => readBody(ApplicationConfigUpdateBody, [1])).toThrow(/JSON object/);
    expect(readBody(ApplicationConfigUpdateBody, undefined)).toEqual({});
  });

  it('PUT replaces with defaults and keeps identity fields; PATCH merges', () => {
    const current: Record<string, unknown> = { applicationId: 'a', tag: 't', disabled: true, sharedSecret: 's' };
    expect(
      nextState(current, { tag: 'n' }, 'replace', { tag: null, disabled: false }, ['applicationId', 'sharedSecret']),
    ).toEqual({ applicationId: 'a', tag: 'n', disabled: false, sharedSecret: 's' });
    expect(
      nextState(current, { sharedSecret: null, disabled: false }, 'merge', { tag: null, disabled: false }, [
        'applicationId',
        'sharedSecret',
      ]),
    ).toEqual({ ...current, disabled: false });
  });
});
