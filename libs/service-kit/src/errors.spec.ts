import { HttpException } from '@nestjs/common';
import { DomainError, HTTP_STATUS_OF } from '@switchboard/contracts';
import { isDependencyDown, toDomainError } from './errors.js';

/** An error the way Node, node-postgres, TypeORM or ioredis shape it. */
function error(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

describe('isDependencyDown', () => {
  it.each([
    ['a refused connection (Node)', error('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })],
    ['a reset connection', error('read ECONNRESET', { code: 'ECONNRESET' })],
    ['an unknown host', error('getaddrinfo ENOTFOUND db', { code: 'ENOTFOUND' })],
    [
      'PostgreSQL shutting down (57P01)',
      error('terminating connection due to administrator command', { code: '57P01' }),
    ],
    [
      'PostgreSQL after a crash (57P02)',
      error('terminating connection because of crash of another server process', { code: '57P02' }),
    ],
    ['PostgreSQL starting (57P03)', error('the database system is starting up', { code: '57P03' })],
    ['PostgreSQL out of connections (53300)', error('sorry, too many clients already', { code: '53300' })],
    ['a connection exception (class 08)', error('connection failure', { code: '08006' })],
    [
      'a TypeORM error wrapping one',
      error('Query failed', { driverError: error('the database system is in recovery mode', { code: '57P03' }) }),
    ],
    ['a cause', error('could not load', { cause: error('connect ECONNREFUSED', { code: 'ECONNREFUSED' }) })],
    ['node-postgres losing its connection', error('Connection terminated unexpectedly')],
    ['the pool not getting one', error('timeout exceeded when trying to connect')],
    ['ioredis with its connection closed', error('Connection is closed.')],
    [
      'ioredis giving up on a command',
      Object.assign(error('Reached the max retries per request limit (which is 20).'), {
        name: 'MaxRetriesPerRequestError',
      }),
    ],
    ['a socket error named only in the message', error('Redis: connect ETIMEDOUT')],
    [
      'a statement of a TypeORM transaction whose connection failed under it',
      Object.assign(
        error(
          'Database connection provided by a query runner was already released, cannot continue to use its querying methods anymore.',
        ),
        {
          name: 'QueryRunnerProviderAlreadyReleasedError',
        },
      ),
    ],
    [
      'the query runner of a TypeORM transaction whose connection failed under it',
      Object.assign(error('Query runner already released. Cannot run queries anymore.'), {
        name: 'QueryRunnerAlreadyReleasedError',
      }),
    ],
  ])('%s', (_what, e) => {
    expect(isDependencyDown(e)).toBe(true);
  });

  it.each([
    ['a unique violation', error('duplicate key value violates unique constraint "x"', { code: '23505' })],
    ['a syntax error', error('syntax error at or near "FORM"', { code: '42601' })],
    [
      'a TypeORM error wrapping a constraint violation',
      error('Query failed', { driverError: error('violates check constraint', { code: '23514' }) }),
    ],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'boom'],
    ['null', null],
  ])('not %s', (_what, e) => {
    expect(isDependencyDown(e)).toBe(false);
  });

  it('stops on a cycle of causes', () => {
    const a = error('a');
    const b = error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(isDependencyDown(a)).toBe(false);
  });
});

describe('toDomainError', () => {
  it('answers Unavailable for a dependency that is down, naming nothing of it', () => {
    const e = toDomainError(error('connect ECONNREFUSED 127.0.0.1:15432', { code: 'ECONNREFUSED' }));
    expect(e).toBeInstanceOf(DomainError);
    expect(e.code).toBe('Unavailable');
    expect(e.message).not.toMatch(/ECONN|127\.0\.0\.1|15432/);
  });

  it('keeps any other unexpected error opaque and Internal', () => {
    const e = toDomainError(error('duplicate key value violates unique constraint "x"', { code: '23505' }));
    expect(e.code).toBe('Internal');
    expect(e.message).toBe('An internal error occurred.');
  });

  it('passes a DomainError through', () => {
    const original = new DomainError('NotFound', 'No such thing.');
    expect(toDomainError(original)).toBe(original);
  });
});

describe('toDomainError of the HTTP framework refusals', () => {
  const fastifyError = (code: string, statusCode: number) => Object.assign(new Error(code), { code, statusCode });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'PayloadTooLarge'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'UnsupportedMediaType'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'ValidationFailed'],
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400, 'ValidationFailed'],
    ['FST_ERR_BAD_URL', 400, 'ValidationFailed'],
    ['FST_ERR_MAX_PARAM_LENGTH', 414, 'UriTooLong'],
  ])('%s (as thrown, and wrapped by Nest in an HttpException)', (code, status, expected) => {
    for (const thrown of [
      fastifyError(code, status),
      new HttpException(code, status, { cause: fastifyError(code, status) }),
    ]) {
      const e = toDomainError(thrown);
      expect(e.code).toBe(expected);
      expect(HTTP_STATUS_OF[e.code]).toBe(status);
      expect(e.message).not.toContain('FST_ERR');
    }
  });
});
