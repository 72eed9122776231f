import { DomainError } from '@switchboard/contracts';
import { janusFailure } from './janus-errors.js';

describe('janusFailure', () => {
  const janusError = (code: number, text: string) => Object.assign(new Error(`${code} ${text}`), { _code: code });

  it('maps an unknown room or feed to NotFound', () => {
    expect(janusFailure('join', janusError(426, 'No such room (1)'))).toMatchObject({ code: 'NotFound' });
    expect(janusFailure('join', janusError(428, 'No such feed (2)'))).toMatchObject({ code: 'NotFound' });
  });

  it('maps a Janus that does not answer to Unavailable, and any other refusal to Internal with its message', () => {
    expect(janusFailure('join', new Error('Janus did not answer in time'))).toMatchObject({ code: 'Unavailable' });
    expect(janusFailure('join', new Error('not connected to Janus'))).toMatchObject({ code: 'Unavailable' });
    const refused = janusFailure('Could not create the room', janusError(433, 'Unauthorized (wrong admin_key)'));
    expect(refused).toMatchObject({ code: 'Internal' });
    expect(refused.message).toBe('Could not create the room: Janus refused (433 Unauthorized (wrong admin_key))');
  });

  it('keeps a DomainError as it is', () => {
    const error = new DomainError('Conflict', 'taken');
    expect(janusFailure('join', error)).toBe(error);
  });
});
