/**
 * What the HTTP framework itself refuses, before any route runs, answered in each interface's own
 * error body (Problem on A, OData error on B) with X-Correlation-Id: bad percent-encoding, an
 * over-long path segment, over-long headers, bodies that are not UTF-8 JSON, JSON `null`, bodies
 * over 1 MiB (read by the client before any reset), unknown routes. Real spawned services.
 */
import { freePort, spawnService, type SpawnedService } from '@switchboard/testing';
import { startManagement, type Harness } from '../management/support.js';
import { RawConnection, rawCall, type RawAnswer } from './raw-http.js';

interface Interface {
  name: string;
  url: () => string;
  /** Prefix of every route (interface A's, or none). */
  prefix: string;
  /** A route taking a JSON object body, and one taking none (a DELETE). */
  bodyRoute: string;
  deleteRoute: string;
  /** A route with an id parameter, without the id. */
  itemRoute: string;
  expectError(answer: RawAnswer, status: number, code: string): void;
}

function expectProblem(answer: RawAnswer, status: number, code: string) {
  expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
    status,
    type: expect.stringMatching(/^application\/problem\+json/),
  });
  expect(answer.body).toEqual({
    type: expect.stringContaining('/problems/'),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    instance: expect.any(String),
    code,
    correlationId: answer.headers['x-correlation-id'],
  });
  expect(answer.headers['x-correlation-id']).toMatch(/^[\x21-\x7e]{1,128}$/);
}

function expectODataError(answer: RawAnswer, status: number, code: string) {
  expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
    status,
    type: expect.stringMatching(/^application\/json/),
  });
  expect(answer.body).toEqual({ error: { code, message: expect.any(String), target: null, details: [] } });
  expect(answer.headers['x-correlation-id']).toMatch(/^[\x21-\x7e]{1,128}$/);
}

describe('the HTTP framework answers every refusal in the interface error body', () => {
  let h: Harness;
  let gateway: SpawnedService;

  beforeAll(async () => {
    h = await startManagement('framework_errors');
    gateway = await spawnService('admin-gateway', { ...h.env, HTTP_PORT: String(await freePort()) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await h?.stop();
  });

  const interfaces: Interface[] = [
    {
      name: 'A (admin-gateway)',
      url: () => gateway.url!,
      prefix: '/admin/api/v1.0',
      bodyRoute: '/applications/app-1/message',
      deleteRoute: '/applications/app-1/channels/ch-1',
      itemRoute: '/applications',
      expectError: expectProblem,
    },
    {
      name: 'B (management-api)',
      url: () => h.url,
      prefix: '',
      bodyRoute: '/ApiKeys',
      deleteRoute: '/ChannelRecordings/app-1/ch-1/00000000-0000-4000-8000-000000000000',
      itemRoute: '/ApplicationConfigs',
      expectError: expectODataError,
    },
  ];

  describe.each(interfaces)('interface $name', (api) => {
    const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer) =>
      rawCall(api.url(), method, `${api.prefix}${path}`, { 'x-api-key': h.keyA, ...headers }, body);
    const json = { 'content-type': 'application/json' };

    it('a malformed percent-encoding in the path is 400, with the caller correlation id', async () => {
      const answer = await call('GET', `${api.itemRoute}/%FF`, { 'x-correlation-id': 'framework-test-1' });
      api.expectError(answer, 400, 'ValidationFailed');
      expect(answer.headers['x-correlation-id']).toBe('framework-test-1');
      expect(answer.text).not.toContain('FST_ERR');
    });

    it('a path segment over 512 characters is 414', async () => {
      api.expectError(await call('GET', `${api.itemRoute}/${'a'.repeat(600)}`), 414, 'UriTooLong');
      // 512 is still routed (and then refused or not by the route itself, never as a 414).
      expect((await call('GET', `${api.itemRoute}/${'a'.repeat(512)}`)).status).not.toBe(414);
    });

    it('a 16 KB URL or 16 KB of headers is 431, with a body', async () => {
      api.expectError(
        await call('GET', `${api.itemRoute}?filler=${'a'.repeat(16 * 1024)}`),
        431,
        'RequestHeaderFieldsTooLarge',
      );
      api.expectError(
        await call('GET', api.itemRoute, { 'x-filler': 'b'.repeat(17 * 1024) }),
        431,
        'RequestHeaderFieldsTooLarge',
      );
    });

    it('a body that is not application/json is 415', async () => {
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/xml',
      ]) {
        const answer = await call('POST', api.bodyRoute, { 'content-type': type }, 'tag=x');
        expect({ type, status: answer.status }).toEqual({ type, status: 415 });
        api.expectError(answer, 415, 'UnsupportedMediaType');
      }
      api.expectError(
        await call('POST', api.bodyRoute, { 'content-length': '9' }, '{"tag":1}'),
        415,
        'UnsupportedMediaType',
      );
    });

    it('a JSON body in another charset than UTF-8 is 415; bytes that are not UTF-8 are 400', async () => {
      api.expectError(
        await call('POST', api.bodyRoute, { 'content-type': 'application/json; charset=iso-8859-1' }, '{}'),
        415,
        'UnsupportedMediaType',
      );
      api.expectError(
        await call(
          'POST',
          api.bodyRoute,
          json,
          Buffer.from([0x7b, 0x22, 0x74, 0x61, 0x67, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]),
        ),
        400,
        'ValidationFailed',
      );
    });

    it('malformed JSON is 400', async () => {
      for (const body of ['{"tag":', '{tag: 1}', "{'tag':'x'}", '   ']) {
        const answer = await call('POST', api.bodyRoute, json, body);
        expect({ body, status: answer.status }).toEqual({ body, status: 400 });
        api.expectError(answer, 400, 'ValidationFailed');
      }
    });

    it('a JSON null body is 400 where an object is expected', async () => {
      const answer = await call('POST', api.bodyRoute, json, 'null');
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(
        api.prefix
          ? expect.objectContaining({ code: 'ValidationFailed' })
          : { error: expect.objectContaining({ code: 'ValidationFailed' }) },
      );
    });

    it('Content-Type: application/json with no body is no body, on a route that takes none', async () => {
      const plain = await call('DELETE', api.deleteRoute, { 'content-length': '0' });
      const typed = await call('DELETE', api.deleteRoute, { ...json, 'content-length': '0' });
      expect(typed.status).not.toBe(400);
      expect(typed.status).toBe(plain.status);
      expect((await call('GET', api.itemRoute, { ...json, 'content-length': '0' })).status).toBe(
        (await call('GET', api.itemRoute)).status,
      );
    });

    it('a request that is not HTTP is 400, answered after the request before it on the same connection', async () => {
      // The list answers 200 on B, 503 on A (no runtime-registry in this test): whatever it is alone.
      const alone = (await call('GET', api.itemRoute)).status;
      const connection = await RawConnection.open(api.url());
      try {
        await connection.send('GET', `${api.prefix}${api.itemRoute}`, { 'x-api-key': h.keyA });
        await connection.send('NOT HTTP AT ALL', '');
        expect((await connection.answer())!.status).toBe(alone);
        api.expectError((await connection.answer())!, 400, 'ValidationFailed');
      } finally {
        connection.close();
      }
    });

    it('an unknown route is 404; a method the path does not take is 405 with Allow', async () => {
      api.expectError(await call('GET', '/NoSuchThing/at/all'), 404, 'NotFound');
      api.expectError(await call('POST', '/NoSuchThing', json, '{}'), 404, 'NotFound');
      const answer = await call('PUT', api.itemRoute, json, '{}');
      api.expectError(answer, 405, 'MethodNotAllowed');
      expect(answer.headers.allow).toBe(api.prefix ? 'GET, HEAD' : 'GET, HEAD, POST');
      const onItem = await call('POST', `${api.itemRoute}/some-id`, json, '{}');
      api.expectError(onItem, 405, 'MethodNotAllowed');
      expect(onItem.headers.allow).toBe(api.prefix ? 'GET, HEAD' : 'GET, HEAD, PUT, PATCH');
    });

    it.each([
      ['2 MiB with Content-Length', 2 * 1024 * 1024, false],
      ['8 MiB with Content-Length', 8 * 1024 * 1024, false],
      ['2 MiB chunked', 2 * 1024 * 1024, true],
      ['8 MiB chunked', 8 * 1024 * 1024, true],
    ])(
      'a body over 1 MiB (%s) is 413, read by the client before any reset; the connection then serves the next request',
      async (_label, size, chunked) => {
        const connection = await RawConnection.open(api.url());
        try {
          await connection.send('POST', `${api.prefix}${api.bodyRoute}`, {
            'x-api-key': h.keyA,
            ...json,
            ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(size) }),
          });
          const sent = await connection.streamBody(size, { chunked });
          const answer = await connection.answer();
          expect(connection.error).toBeNull();
          expect(sent).toBe(size);
          api.expectError(answer!, 413, 'PayloadTooLarge');
          await connection.send('GET', `${api.prefix}${api.itemRoute}/%FF`);
          api.expectError((await connection.answer())!, 400, 'ValidationFailed');
        } finally {
          connection.close();
        }
      },
    );
  });

  it('interface A answers the same under its /admin/api/v1 alias', async () => {
    expectProblem(
      await rawCall(gateway.url!, 'GET', `/admin/api/v1/applications/${'a'.repeat(600)}`),
      414,
      'UriTooLong',
    );
    expectProblem(
      await rawCall(
        gateway.url!,
        'POST',
        '/admin/api/v1/applications/app-1/message',
        { 'content-type': 'text/plain' },
        'hi',
      ),
      415,
      'UnsupportedMediaType',
    );
  });

  it('interface B: a null body creates no API key', async () => {
    const count = async () =>
      Number((await h.sql<{ n: string }>('SELECT count(*) AS n FROM management.api_key'))[0]!.n);
    const before = await count();
    for (const body of ['null', '[]', '"x"', '1']) {
      expect(
        (await rawCall(h.url, 'POST', '/ApiKeys', { 'x-api-key': h.keyA, 'content-type': 'application/json' }, body))
          .status,
      ).toBe(400);
    }
    expect(await count()).toBe(before);
    // No body at all still creates a key with the defaults (tag null).
    expect((await rawCall(h.url, 'POST', '/ApiKeys', { 'x-api-key': h.keyA, 'content-length': '0' })).status).toBe(201);
    expect(await count()).toBe(before + 1);
  });

  it('a body over 1 MiB declared far larger than the drain bound still gets its 413 first', async () => {
    const connection = await RawConnection.open(h.url);
    try {
      await connection.send('POST', '/ApiKeys', {
        'x-api-key': h.keyA,
        'content-type': 'application/json',
        'content-length': String(1024 * 1024 * 1024),
      });
      const answer = await connection.answer();
      expectODataError(answer!, 413, 'PayloadTooLarge');
      // The server reads at most its bound (16 MiB) of the rest, then closes.
      await connection.streamBody(64 * 1024 * 1024, { pauseMs: 0 });
      expect(connection.closed || connection.error !== null).toBe(true);
    } finally {
      connection.close();
    }
  });
});
