import {
  ContractViolation,
  DomainError,
  EDGE_ERROR_CODES,
  SYNC_CLOSE_CODES,
  SYNC_ERROR_CODES,
} from '@switchboard/contracts';
import { syncRefusal } from './sync.errors.js';

describe('syncRefusal: DomainError codes as /sync error frames', () => {
  it('keeps the code, message and details of the edge refusals and the registry answers', () => {
    const details = [{ field: 'channelId', message: 'not joined' }];
    expect(syncRefusal(new DomainError('NotJoined', 'Join first.', details))).toEqual({
      body: { code: 'NotJoined', message: 'Join first.', details },
    });
    expect(syncRefusal(new DomainError('Conflict', 'Exists already.'))).toEqual({
      body: { code: 'Conflict', message: 'Exists already.' },
    });
  });

  it('gives every edge code a frame code of the protocol', () => {
    for (const code of EDGE_ERROR_CODES)
      expect(SYNC_ERROR_CODES).toContain(syncRefusal(new DomainError(code, 'refused')).body.code);
  });

  it('closes the socket after a refused token, but not after a valid token naming another client', () => {
    expect(syncRefusal(new DomainError('TokenInvalid', 'bad')).closeCode).toBe(SYNC_CLOSE_CODES.tokenInvalid);
    expect(syncRefusal(new DomainError('TokenExpired', 'old')).closeCode).toBe(SYNC_CLOSE_CODES.tokenExpired);
    expect(syncRefusal(new DomainError('ApplicationRefused', 'off')).closeCode).toBe(
      SYNC_CLOSE_CODES.applicationRefused,
    );
    expect(syncRefusal(new DomainError('TokenForAnotherClient', 'other client'))).toEqual({
      body: { code: 'TokenInvalid', message: 'other client' },
    });
  });

  it('describes no internal failure, of a service or of an HTTP framework', () => {
    const internal = { body: { code: 'Internal', message: 'An internal error occurred.' } };
    expect(syncRefusal(new DomainError('Internal', 'Redis said no', [{ message: 'stack' }]))).toEqual(internal);
    expect(syncRefusal(new DomainError('UnsupportedMediaType', 'text/plain'))).toEqual(internal);
    expect(syncRefusal(new Error('boom'))).toEqual(internal);
  });

  it('answers a contract violation as ValidationFailed naming each field', () => {
    const violation = new ContractViolation('EdgeReport', [{ field: 'channelId', message: 'is required' }]);
    expect(syncRefusal(violation)).toEqual({
      body: {
        code: 'ValidationFailed',
        message: 'The request is invalid.',
        details: [{ field: 'channelId', message: 'is required' }],
      },
    });
  });
});
