import { DomainError } from '@switchboard/contracts';
import { checkId } from './params.js';

describe('checkId', () => {
  function refusal(value: string) {
    let thrown: unknown = 'accepted';
    try {
      checkId('channelId', value);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    return (thrown as DomainError).details;
  }

  it('refuses NUL and lone surrogates (which no percent-encoding can carry, but a decoded path might), naming the parameter', () => {
    expect(refusal('a\u0000')).toEqual([{ field: 'channelId', message: 'must not contain U+0000 (NUL)' }]);
    expect(refusal('\ud800x')).toEqual([
      { field: 'channelId', message: 'must be well-formed Unicode (no lone surrogate)' },
    ]);
    expect(refusal('x\udfff')).toEqual([
      { field: 'channelId', message: 'must be well-formed Unicode (no lone surrogate)' },
    ]);
  });

  it('accepts astral characters', () => {
    expect(checkId('channelId', 'room-\u{1F600}')).toBe('room-\u{1F600}');
  });
});
