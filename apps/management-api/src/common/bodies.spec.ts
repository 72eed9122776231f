import { ApplicationConfigUpdateBody } from '@switchboard/contracts';
import { nextState, readBody } from './bodies.js';

describe('request bodies', () => {
  it('drops server-managed fields and refuses unknown ones', () => {
    expect(readBody(ApplicationConfigUpdateBody, { id: 'x', organizationId: 'y', tag: 't' })).toEqual({ tag: 't' });
    expect(() => readBody(ApplicationConfigUpdateBody, { colour: 'red' })).toThrow();
    expect(() => readBody(ApplicationConfigUpdateBody, [1])).toThrow(/JSON object/);
    expect(readBody(ApplicationConfigUpdateBody, undefined)).toEqual({});
  });

  it('PUT replaces with defaults and keeps identity fields; PATCH merges', () => {
    const current: Record<string, unknown> = { applicationId: 'a', tag: 't', disabled: true, sharedSecret: 's' };
    expect(nextState(current, { tag: 'n' }, 'replace', { tag: null, disabled: false }, ['applicationId', 'sharedSecret'])).toEqual({ applicationId: 'a', tag: 'n', disabled: false, sharedSecret: 's' });
    expect(nextState(current, { sharedSecret: null, disabled: false }, 'merge', { tag: null, disabled: false }, ['applicationId', 'sharedSecret'])).toEqual({ ...current, disabled: false });
  });
});
