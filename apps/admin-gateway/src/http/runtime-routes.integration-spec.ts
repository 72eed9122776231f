/**
 * Every interface A runtime route of the gateway against a fake runtime-registry on the real NATS:
 * which query or command each route sends, 200 vs 204, 400 naming the offending fields and path
 * parameters, 404 passed through from the registry, 403 for operator routes, the OpenAPI document.
 */
import { testNamespace, testServers } from '@switchboard/testing';
import {
  startFakeRuntime,
  OPERATOR_KEY,
  OPERATOR_SCOPE,
  TENANT_KEY,
  WireFailure,
  type FakeRuntime,
} from '../testing/fake-runtime.testing.js';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { IDS, MESSAGE, ROUTES, type RouteCase } from '../testing/route-table.testing.js';

const PREFIXES = ['/admin/api/v1.0', '/admin/api/v1'];

interface Reply {
  status: number;
  type: string | null;
  body: any;
  correlationId: string | null;
}

describe('interface A runtime routes', () => {
  const servers = testServers();
  const ns = testNamespace('gw_routes');
  let fake: FakeRuntime;
  let gateway: TestGateway;

  async function call(
    method: string,
    path: string,
    options: {
      key?: string | null;
      body?: unknown;
      raw?: string;
      on?: TestGateway;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? OPERATOR_KEY : options.key;
    if (key) headers['x-api-key'] = key;
    let body: string | undefined = options.raw;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${(options.on ?? gateway).url}${path}`, { method, headers, body });
    const text = await res.text();
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      body: text ? JSON.parse(text) : undefined,
      correlationId: res.headers.get('x-correlation-id'),
    };
  }

  function expectProblem(reply: Reply, status: number, code: string) {
    expect(reply.status).toBe(status);
    expect(reply.type).toContain('application/problem+json');
    expect(reply.body).toEqual(
      expect.objectContaining({
        type: expect.stringContaining('/problems/'),
        title: expect.any(String),
        status,
        detail: expect.any(String),
        instance: expect.any(String),
        code,
        correlationId: reply.correlationId,
      }),
    );
  }

  beforeAll(async () => {
    fake = await startFakeRuntime(servers.natsUrl, ns);
    gateway = await startTestGateway(servers.natsUrl, ns);
  });

  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  beforeEach(() => {
    fake.queries.length = 0;
    fake.commands.length = 0;
    fake.onQuery = ({ query }) => ({ answeredKind: query.kind });
    fake.onCommand = () => null;
  });

  describe.each(PREFIXES)('under %s', (prefix) => {
    it.each(ROUTES.map((r) => [`${r.method} ${r.path} (${r.name})`, r] as const))(
      '%s',
      async (_label, route: RouteCase) => {
        const reply = await call(route.method, `${prefix}${route.path}`, { body: route.body });
        if (route.query) {
          expect(reply.status).toBe(200);
          expect(reply.type).toBe('application/json; charset=utf-8');
          expect(reply.body).toEqual({ answeredKind: route.query.kind });
          expect(fake.queries).toEqual([{ scope: OPERATOR_SCOPE, query: route.query }]);
          expect(fake.commands).toEqual([]);
        } else {
          expect(reply.status).toBe(204);
          expect(reply.body).toBeUndefined();
          expect(fake.commands).toEqual([{ scope: OPERATOR_SCOPE, command: route.command }]);
          expect(fake.queries).toEqual([]);
        }
      },
    );
  });

  it('returns the registry answer as is: records, arrays, empty arrays', async () => {
    const snapshot = {
      id: IDS.applicationId,
      channelCount: 1,
      userCount: 2,
      deviceCount: 2,
      clientCount: 3,
      connectionCount: 4,
    };
    fake.onQuery = ({ query }) => (query.kind === 'application.get' ? snapshot : []);
    expect((await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}`)).body).toEqual(snapshot);
    const list = await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}/channels`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
  });

  describe('bodies', () => {
    const withBodies = ROUTES.filter((r) => r.badBody);

    it.each(withBodies.map((r) => [`${r.method} ${r.path}`, r] as const))(
      '%s refuses a bad body, naming each field',
      async (_label, route: RouteCase) => {
        const reply = await call(route.method, `/admin/api/v1.0${route.path}`, { body: route.badBody!.body });
        expectProblem(reply, 400, 'ValidationFailed');
        expect((reply.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(
          [...route.badBody!.fields].sort(),
        );
        for (const field of route.badBody!.fields) expect(reply.body.detail).toContain(field);
        expect(fake.commands).toEqual([]);
      },
    );

    it.each(withBodies.map((r) => [`${r.method} ${r.path}`, r] as const))(
      '%s refuses a missing or non-object body',
      async (_label, route: RouteCase) => {
        expectProblem(await call(route.method, `/admin/api/v1.0${route.path}`), 400, 'ValidationFailed');
        expectProblem(
          await call(route.method, `/admin/api/v1.0${route.path}`, { body: [MESSAGE] }),
          400,
          'ValidationFailed',
        );
        expectProblem(
          await call(route.method, `/admin/api/v1.0${route.path}`, { raw: '{"message":' }),
          400,
          'ValidationFailed',
        );
        expect(fake.commands).toEqual([]);
      },
    );

    it('accepts null for every patch field (null leaves a value unchanged)', async () => {
      const reply = await call('PATCH', `/admin/api/v1.0/applications/a/channels/c`, {
        body: { recording: null, excludedUserIds: null },
      });
      expect(reply.status).toBe(204);
    });

    it('answers 413 Problem for a body over 1 MiB', async () => {
      const reply = await call('POST', `/admin/api/v1.0/applications/${IDS.applicationId}/message`, {
        body: { message: 'x'.repeat(1024 * 1024 + 10) },
      });
      expectProblem(reply, 413, 'PayloadTooLarge');
      expect(fake.commands).toEqual([]);
    });
  });

  describe('path parameters', () => {
    it('refuses a media server id that is not a UUID, naming the parameter', async () => {
      for (const path of ['/mediaservers/not-a-uuid', '/mediaservers/not-a-uuid/stats']) {
        const reply = await call('GET', `/admin/api/v1.0${path}`);
        expectProblem(reply, 400, 'ValidationFailed');
        expect(reply.body.errors).toEqual([{ field: 'mediaServerId', message: 'must be a UUID' }]);
      }
      expectProblem(
        await call('PATCH', '/admin/api/v1.0/mediaservers/123', { body: { active: true } }),
        400,
        'ValidationFailed',
      );
      expect(fake.queries).toEqual([]);
      expect(fake.commands).toEqual([]);
    });

    it('refuses ids with control characters, naming the parameter; an empty segment matches no route', async () => {
      expectProblem(await call('GET', '/admin/api/v1.0/applications//channels'), 404, 'NotFound');
      const control = await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}/channels/bad%01id/users`);
      expectProblem(control, 400, 'ValidationFailed');
      expect(control.body.errors).toEqual([{ field: 'channelId', message: 'must not contain control characters' }]);
      expect(fake.queries).toEqual([]);
    });

    it('refuses an id longer than 256 characters, naming the parameter, at any depth of the path', async () => {
      const long = 'x'.repeat(257);
      const reply = await call(
        'GET',
        `/admin/api/v1.0/applications/${IDS.applicationId}/channels/${IDS.channelId}/users/${IDS.userId}/devices/${IDS.deviceId}/clients/${long}`,
      );
      expectProblem(reply, 400, 'ValidationFailed');
      expect(reply.body.errors).toEqual([{ field: 'clientId', message: 'must be at most 256 characters' }]);
      expect(
        (await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}/users/${'y'.repeat(256)}`)).status,
      ).toBe(200);
      expect(fake.queries.map((r) => r.query)).toEqual([
        { kind: 'user.get', applicationId: IDS.applicationId, userId: 'y'.repeat(256) },
      ]);
    });

    it('passes percent-encoded ids decoded', async () => {
      await call('GET', '/admin/api/v1.0/applications/my%20app/users/ann%40example.com');
      expect(fake.queries.map((r) => r.query)).toEqual([
        { kind: 'user.get', applicationId: 'my app', userId: 'ann@example.com' },
      ]);
    });
  });

  describe('unstorable text (U+0000, lone surrogates)', () => {
    const NUL = 'must not contain U+0000 (NUL)';
    const SURROGATE = 'must be well-formed Unicode (no lone surrogate)';
    const app = `/admin/api/v1.0/applications/${IDS.applicationId}`;
    const client = `${app}/users/${IDS.userId}/devices/${IDS.deviceId}/clients/${IDS.clientId}`;

    it.each([
      ['a NUL in a message', 'POST', `${app}/message`, { message: 'x\u0000y' }, 'message', NUL],
      ['a lone high surrogate in a message', 'POST', `${app}/message`, { message: '\ud800' }, 'message', SURROGATE],
      [
        'a lone low surrogate in a role of a message',
        'POST',
        `${client}/message`,
        { message: 'hi', clientRoles: ['ok', 'x\udc00'] },
        'clientRoles[1]',
        SURROGATE,
      ],
      [
        'a NUL in a channel recording tag',
        'PATCH',
        `${app}/channels/${IDS.channelId}`,
        { recording: true, recordingTag: 'a\u0000' },
        'recordingTag',
        NUL,
      ],
      ['a NUL in a client user alias', 'PATCH', client, { userAlias: '\u0000' }, 'userAlias', NUL],
    ] as const)(
      'refuses %s with a 400 naming the field, sending nothing',
      async (_case, method, path, body, field, message) => {
        const reply = await call(method, path, { body });
        expectProblem(reply, 400, 'ValidationFailed');
        expect(reply.body.errors).toEqual([{ field, message }]);
        expect(fake.commands).toEqual([]);
      },
    );

    it('accepts astral characters (emoji) as surrogate pairs', async () => {
      expect((await call('POST', `${app}/message`, { body: { message: 'hi \u{1F44B}' } })).status).toBe(204);
      expect(fake.commands.map((c) => (c.command as { message?: { message: string } }).message?.message)).toEqual([
        'hi \u{1F44B}',
      ]);
    });

    it('refuses a NUL in a path id (percent-encoded), naming the parameter', async () => {
      const reply = await call('GET', `${app}/channels/bad%00id`);
      expectProblem(reply, 400, 'ValidationFailed');
      expect(reply.body.errors).toEqual([{ field: 'channelId', message: NUL }]);
      const recording = await call('GET', `${app}/channels/%00/recordings/${IDS.mediaServerId}`);
      expectProblem(recording, 400, 'ValidationFailed');
      expect(recording.body.errors).toEqual([{ field: 'channelId', message: NUL }]);
      expect(fake.queries).toEqual([]);
    });
  });

  describe('errors of the registry', () => {
    it('passes NotFound through as a 404 Problem', async () => {
      fake.onQuery = () => {
        throw new WireFailure('NotFound', 'No such channel.');
      };
      fake.onCommand = () => {
        throw new WireFailure('NotFound', 'No such user.');
      };
      const read = await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}/channels/${IDS.channelId}`);
      expectProblem(read, 404, 'NotFound');
      expect(read.body.detail).toBe('No such channel.');
      expectProblem(
        await call(
          'DELETE',
          `/admin/api/v1.0/applications/${IDS.applicationId}/channels/${IDS.channelId}/users/${IDS.userId}`,
        ),
        404,
        'NotFound',
      );
      expectProblem(
        await call('PATCH', `/admin/api/v1.0/applications/${IDS.applicationId}/channels/${IDS.channelId}`, {
          body: { audioMuted: true },
        }),
        404,
        'NotFound',
      );
    });

    it('maps the other registry codes: Conflict 409, ValidationFailed 400, Internal 500 without details', async () => {
      fake.onCommand = () => {
        throw new WireFailure('Conflict', 'busy');
      };
      expectProblem(
        await call('PATCH', `/admin/api/v1.0/mediaservers/${IDS.mediaServerId}`, { body: { active: true } }),
        409,
        'Conflict',
      );
      fake.onQuery = () => {
        throw new WireFailure('ValidationFailed', 'bad cursor');
      };
      expectProblem(await call('GET', '/admin/api/v1.0/diagnostics/datastore?cursor=zzz'), 400, 'ValidationFailed');
      fake.onQuery = () => {
        throw new Error('boom at registry.ts:12');
      };
      const internal = await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}`);
      expectProblem(internal, 500, 'Internal');
      expect(JSON.stringify(internal.body)).not.toContain('registry.ts');
    });
  });

  describe('credentials', () => {
    const operatorRoutes = ROUTES.filter((r) => r.operator);

    it('has the operator routes of the contract', () => {
      expect(operatorRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
        [
          'GET /connectors',
          'GET /diagnostics/datastore',
          'GET /mediaservers',
          'GET /mediaservers/stats',
          `GET /mediaservers/${IDS.mediaServerId}`,
          `GET /mediaservers/${IDS.mediaServerId}/stats`,
          `PATCH /mediaservers/${IDS.mediaServerId}`,
          'GET /sipconnectors',
        ].sort(),
      );
    });

    it.each(operatorRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))(
      '%s answers 403 to a non-operator key, asking nothing',
      async (_label, route: RouteCase) => {
        expectProblem(
          await call(route.method, `/admin/api/v1.0${route.path}`, { key: TENANT_KEY, body: route.body }),
          403,
          'Forbidden',
        );
        expect(fake.queries).toEqual([]);
        expect(fake.commands).toEqual([]);
      },
    );

    it('lets a non-operator key use the organization routes, with its own scope', async () => {
      const reply = await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}`, { key: TENANT_KEY });
      expect(reply.status).toBe(200);
      expect(fake.queries[0]!.scope).toEqual({ organizationId: 'org-1', operator: false, principal: 'key-tenant' });
    });

    it("lets a non-operator key list applications, asking the registry with its own scope (the registry answers the organization's own)", async () => {
      const reply = await call('GET', '/admin/api/v1.0/applications', { key: TENANT_KEY });
      expect(reply.status).toBe(200);
      expect(fake.queries).toEqual([
        expect.objectContaining({
          scope: { organizationId: 'org-1', operator: false, principal: 'key-tenant' },
          query: { kind: 'applications.list' },
        }),
      ]);
    });

    it('answers 401 without a key or with an unknown one', async () => {
      expectProblem(
        await call('GET', `/admin/api/v1.0/applications/${IDS.applicationId}`, { key: null }),
        401,
        'Unauthorized',
      );
      expectProblem(
        await call('GET', `/admin/api/v1.0/mediaservers`, { key: 'sb_unknown-key-0000' }),
        401,
        'Unauthorized',
      );
      expect(fake.queries).toEqual([]);
    });
  });

  describe('admin CIDR allowlist', () => {
    let outside: TestGateway;
    beforeAll(async () => {
      // The test calls come from 127.0.0.1: outside this allowlist.
      outside = await startTestGateway(servers.natsUrl, ns, { ADMIN_CIDR_ALLOWLIST: '10.0.0.0/8' });
    });
    afterAll(async () => {
      await outside?.close();
    });

    it.each([
      ['as written', `/admin/api/v1.0/applications/${IDS.applicationId}`],
      ['under the alias', `/admin/api/v1/applications/${IDS.applicationId}`],
      ['percent-encoded', `/%61dmin/api/v1.0/applications/${IDS.applicationId}`],
      ['percent-encoded deeper', `/admin/%61pi/v1.0/%61pplications/${IDS.applicationId}`],
      ['percent-encoded, operator route', '/%61dmin/api/v1.0/mediaservers'],
    ])(
      'refuses a caller outside it with 403 however the path is spelled (%s), asking nothing',
      async (_label, path) => {
        expectProblem(await call('GET', path, { on: outside }), 403, 'Forbidden');
        expectProblem(await call('GET', path, { on: outside, key: null }), 403, 'Forbidden');
        expect(fake.queries).toEqual([]);
      },
    );

    it('serves the same encoded path to a caller inside it (the router decodes it)', async () => {
      expect((await call('GET', `/%61dmin/api/v1.0/applications/${IDS.applicationId}`)).status).toBe(200);
    });

    it('applies to the OpenAPI document too: 403 outside, readable without a credential inside', async () => {
      for (const path of [
        '/admin/api/v1.0/openapi.json',
        '/admin/api/v1/openapi.json',
        '/%61dmin/api/v1.0/openapi.json',
        '/admin/api/v1.0/openapi.json?x=1',
      ]) {
        expectProblem(await call('GET', path, { on: outside, key: null }), 403, 'Forbidden');
        const inside = await call('GET', path, { key: null });
        expect(inside.status).toBe(200);
        expect(inside.body.openapi).toEqual(expect.any(String));
      }
    });

    it('leaves probes and metrics open to any address', async () => {
      for (const path of ['/healthz', '/readyz', '/metrics'])
        expect((await fetch(`${outside.url}${path}`)).status).toBe(200);
    });

    it('judges the TCP peer, not a caller named in X-Forwarded-For, when no proxy is trusted', async () => {
      const path = `/admin/api/v1.0/applications/${IDS.applicationId}`;
      expectProblem(
        await call('GET', path, { on: outside, headers: { 'x-forwarded-for': '10.1.2.3' } }),
        403,
        'Forbidden',
      );
    });
  });

  describe('admin CIDR allowlist behind a trusted reverse proxy (TRUSTED_PROXY_CIDRS)', () => {
    let proxied: TestGateway;
    const path = `/admin/api/v1.0/applications/${IDS.applicationId}`;
    beforeAll(async () => {
      // The test plays the proxy (127.0.0.1), in front of callers on 10.0.0.0/8 and elsewhere.
      proxied = await startTestGateway(servers.natsUrl, ns, {
        ADMIN_CIDR_ALLOWLIST: '10.0.0.0/8',
        TRUSTED_PROXY_CIDRS: '127.0.0.1/32',
      });
    });
    afterAll(async () => {
      await proxied?.close();
    });

    it('admits a caller the proxy names inside the allowlist, and refuses one outside it or the proxy itself', async () => {
      expect((await call('GET', path, { on: proxied, headers: { 'x-forwarded-for': '10.1.2.3' } })).status).toBe(200);
      expectProblem(
        await call('GET', path, { on: proxied, headers: { 'x-forwarded-for': '198.51.100.7' } }),
        403,
        'Forbidden',
      );
      expectProblem(await call('GET', path, { on: proxied }), 403, 'Forbidden');
    });

    it('takes the last address the trusted proxies did not add: a caller cannot prepend an allowed one', async () => {
      // The caller (198.51.100.7) sent "X-Forwarded-For: 10.9.9.9"; the proxy appended the caller's address.
      expectProblem(
        await call('GET', path, { on: proxied, headers: { 'x-forwarded-for': '10.9.9.9, 198.51.100.7' } }),
        403,
        'Forbidden',
      );
      expect(
        (await call('GET', path, { on: proxied, headers: { 'x-forwarded-for': '198.51.100.7, 10.1.2.3' } })).status,
      ).toBe(200);
    });
  });

  describe('diagnostics paging', () => {
    it('forwards cursor and count', async () => {
      await call('GET', '/admin/api/v1.0/diagnostics/datastore?cursor=42&count=500');
      expect(fake.queries.map((r) => r.query)).toEqual([{ kind: 'diagnostics.datastore', cursor: '42', count: 500 }]);
    });

    it.each([
      ['count=0', 'count'],
      ['count=1001', 'count'],
      ['count=ten', 'count'],
      ['count=1.5', 'count'],
      ['cursor=%20', 'cursor'],
    ])('refuses %s, naming %s', async (queryString, field) => {
      const reply = await call('GET', `/admin/api/v1.0/diagnostics/datastore?${queryString}`);
      expectProblem(reply, 400, 'ValidationFailed');
      expect(reply.body.errors).toEqual([expect.objectContaining({ field })]);
      expect(fake.queries).toEqual([]);
    });
  });

  describe('OpenAPI document', () => {
    let doc: { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };
    beforeAll(async () => {
      doc = (await call('GET', '/admin/api/v1.0/openapi.json', { key: null })).body;
    });

    it.each(PREFIXES.flatMap((p) => ROUTES.map((r) => [`${r.method} ${p}${r.doc}`, p, r] as const)))(
      'lists %s',
      (_label, prefix, route: RouteCase) => {
        const operation = doc.paths[`${prefix}${route.doc}`]?.[route.method.toLowerCase()];
        expect(operation).toEqual(
          expect.objectContaining({ summary: expect.any(String), responses: expect.any(Object) }),
        );
        const success = route.query ? '200' : '204';
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining([success, '400', '401']));
        if (route.body)
          expect(operation.requestBody.content['application/json'].schema).toEqual(
            expect.objectContaining({ $ref: expect.stringContaining('#/components/schemas/') }),
          );
        for (const name of [...route.doc.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])) {
          expect(operation.parameters).toEqual(
            expect.arrayContaining([expect.objectContaining({ name, in: 'path', required: true })]),
          );
        }
      },
    );

    it('publishes no other runtime route (recording routes are covered by recordings.integration-spec)', () => {
      const documented = Object.entries(doc.paths)
        .filter(([path]) => !/\/(recordings|connectionrecordings)(\/|$)/.test(path))
        .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
      const expected = PREFIXES.flatMap((p) => ROUTES.map((r) => `${r.method} ${p}${r.doc}`));
      expect(documented.sort()).toEqual([...new Set(expected)].sort());
    });

    it('carries the record, patch and error schemas', () => {
      for (const name of [
        'ApplicationSnapshot',
        'ChannelSnapshot',
        'ConnectionInfo',
        'MediaServer',
        'MediaServerStatistics',
        'ChannelPatch',
        'ClientInChannelPatch',
        'MessageBody',
        'ProblemDetails',
        'Connector',
        'DatastorePage',
      ]) {
        expect(doc.components.schemas).toHaveProperty(name);
      }
    });
  });
});
