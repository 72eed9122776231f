/**
 * The walking skeleton end to end, every piece real: management-api on PostgreSQL, runtime-registry
 * on Redis, admin-gateway in front, all three as separate processes talking over NATS.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import {
  createTestDatabase,
  findApp,
  flushRedisPrefix,
  freePort,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { call, expectODataError, expectProblem } from './http.js';

const run = promisify(execFile);

describe('walking skeleton', () => {
  const servers = testServers();
  const ns = testNamespace('skeleton');
  const redisPrefix = `${ns}:`;
  let db: TestDatabase;
  let env: Record<string, string>;
  let management: SpawnedService;
  let registry: SpawnedService;
  let gateway: SpawnedService;
  let operatorKey: string;
  let organizationId: string;
  let nc: NatsConnection;
  let registryPort: number;

  const admin = (path: string) => `${gateway.url}/admin/api/v1.0${path}`;
  const mgmt = (path: string) => `${management.url}${path}`;

  /**
   * Puts an application in use the way the client edge does: a client registers through
   * `runtime-registry.v1.edge` (here reported directly over NATS in the Nest packet format, by a
   * gateway id that never heartbeats, so the registry never drops the client).
   */
  async function registerClient(applicationId: string, orgId: string) {
    const report = {
      kind: 'client.register',
      client: {
        applicationId,
        userId: 'e2e-user',
        deviceId: 'e2e-device',
        clientId: 'e2e-client',
        userAlias: null,
        deviceAlias: null,
        tag: null,
        roles: [],
        protocol: 'websocket',
      },
      organizationId: orgId,
      gatewayId: `e2e-gateway-${ns}`,
      claims: [],
    };
    const msg = await nc.request(
      `${ns}.runtime-registry.v1.edge`,
      JSON.stringify({ pattern: 'runtime-registry.v1.edge', id: randomUUID(), data: { report } }),
      { timeout: 5000 },
    );
    const reply = JSON.parse(new TextDecoder().decode(msg.data)) as { err?: unknown; response?: unknown };
    expect(reply.err ?? null).toBeNull();
    expect(reply.response).toEqual({ ok: true });
  }

  beforeAll(async () => {
    db = await createTestDatabase('skeleton');
    env = {
      NATS_URL: servers.natsUrl,
      NATS_NAMESPACE: ns,
      REDIS_URL: servers.redisUrl,
      REDIS_KEY_PREFIX: redisPrefix,
      DATABASE_URL: db.url,
      LOG_LEVEL: 'debug',
      NATS_REQUEST_TIMEOUT_MS: '1500',
    };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    ({ apiKey: operatorKey, organizationId } = JSON.parse(boot.stdout) as { apiKey: string; organizationId: string });
    registryPort = await freePort();
    [management, registry, gateway] = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(registryPort) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
    ]);
    nc = await connect({ servers: servers.natsUrl });
  });

  afterAll(async () => {
    await nc?.close();
    await Promise.all([management?.stop(), registry?.stop(), gateway?.stop()]);
    await flushRedisPrefix(servers.redisUrl, redisPrefix);
    await db?.drop();
  });

  it('a second bootstrap keeps the first key and prints none', async () => {
    const again = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    expect(JSON.parse(again.stdout)).toEqual({ organizationId, apiKey: null });
  });

  describe('interface A through the gateway', () => {
    it('lists no applications with the operator key, on both prefixes', async () => {
      const answer = await call('GET', admin('/applications'), { headers: { 'X-API-Key': operatorKey } });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual([]);
      const alias = await call('GET', `${gateway.url}/admin/api/v1/applications`, {
        headers: { 'X-API-Key': operatorKey },
      });
      expect(alias.status).toBe(200);
    });

    it('answers 401 Problem without a credential or with a bad one', async () => {
      expectProblem(await call('GET', admin('/applications')), 401, 'Unauthorized');
      expectProblem(
        await call('GET', admin('/applications'), { headers: { 'X-API-Key': 'sb_not-a-real-key-at-all' } }),
        401,
        'Unauthorized',
      );
      expectProblem(
        await call('GET', admin('/applications'), { headers: { Authorization: 'Bearer abc.def.ghi' } }),
        401,
        'Unauthorized',
      );
    });

    it('echoes X-Correlation-Id and carries it across the NATS hop into the registry logs', async () => {
      const correlationId = `corr-${randomUUID()}`;
      const answer = await call('GET', admin('/applications'), {
        headers: { 'X-API-Key': operatorKey, 'X-Correlation-Id': correlationId },
      });
      expect(answer.headers.get('x-correlation-id')).toBe(correlationId);
      await waitFor(() => registry.output().includes(`"correlationId":"${correlationId}"`), { timeoutMs: 5000 });
      const generated = await call('GET', admin('/applications'), { headers: { 'X-API-Key': operatorKey } });
      expect(generated.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('returns an application snapshot read from Redis, and 404 Problem for an unknown one', async () => {
      const applicationId = `app-${ns}`;
      await registerClient(applicationId, organizationId);
      const list = await call('GET', admin('/applications'), { headers: { 'X-API-Key': operatorKey } });
      expect(list.body).toEqual([applicationId]);
      const snapshot = await call('GET', admin(`/applications/${applicationId}`), {
        headers: { 'X-API-Key': operatorKey },
      });
      expect(snapshot.status).toBe(200);
      expect(snapshot.body).toEqual({
        id: applicationId,
        channelCount: 0,
        userCount: 1,
        deviceCount: 1,
        clientCount: 1,
        connectionCount: 0,
      });
      expectProblem(
        await call('GET', admin('/applications/no-such-app'), { headers: { 'X-API-Key': operatorKey } }),
        404,
        'NotFound',
      );
    });

    it("keeps organizations apart: another organization gets 404, and each key's application list holds its own organization's", async () => {
      const applicationId = `mine-${ns}`;
      await registerClient(applicationId, organizationId);
      const created = await call<{ key: string }>('POST', mgmt('/ApiKeys'), {
        headers: { 'X-API-Key': operatorKey },
        body: { tag: 'tenant key' },
      });
      expect(created.status).toBe(201);
      const tenantKey = created.body.key;
      expect(
        (await call('GET', admin(`/applications/${applicationId}`), { headers: { 'X-API-Key': tenantKey } })).status,
      ).toBe(200);
      const own = await call<string[]>('GET', admin('/applications'), { headers: { 'X-API-Key': tenantKey } });
      expect(own.status).toBe(200);
      expect(own.body).toContain(applicationId);

      const foreignKey = await insertOrganizationWithKey(db.url);
      expectProblem(
        await call('GET', admin(`/applications/${applicationId}`), { headers: { 'X-API-Key': foreignKey } }),
        404,
        'NotFound',
      );
      const foreign = await call<string[]>('GET', admin('/applications'), { headers: { 'X-API-Key': foreignKey } });
      expect(foreign.status).toBe(200);
      expect(foreign.body).toEqual([]);
    });

    it('serves its OpenAPI document, generated from the controllers', async () => {
      const doc = await call<{ paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } }>(
        'GET',
        admin('/openapi.json'),
      );
      expect(doc.status).toBe(200);
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining(['/admin/api/v1.0/applications', '/admin/api/v1.0/applications/{applicationId}']),
      );
      expect(doc.body.components.schemas).toHaveProperty('ApplicationSnapshot');
      expect(doc.body.components.schemas).toHaveProperty('ProblemDetails');
    });
  });

  describe('interface B API keys', () => {
    it('lists the bootstrap key without its value', async () => {
      const answer = await call<{ value: Array<Record<string, unknown>> }>('GET', mgmt('/ApiKeys'), {
        headers: { 'X-API-Key': operatorKey },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.value.length).toBeGreaterThanOrEqual(1);
      for (const record of answer.body.value) expect(record.key).toBeNull();
      expect(answer.text).not.toContain(operatorKey);
    });

    it('creates a key shown once, stored hashed, readable and updatable by id', async () => {
      const created = await call<Record<string, any>>('POST', mgmt('/ApiKeys'), {
        headers: { 'X-API-Key': operatorKey },
        body: { tag: 'ci' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          key: expect.stringMatching(/^sb_/),
          tag: 'ci',
          createdOn: expect.any(Number),
          modifiedOn: expect.any(Number),
        }),
      );
      const stored = await queryOne(db.url, 'SELECT key_hash FROM management.api_key WHERE id = $1', [created.body.id]);
      expect(stored.key_hash).toBe(createHash('sha256').update(created.body.key).digest('hex'));

      const read = await call<Record<string, unknown>>('GET', mgmt(`/ApiKeys/${created.body.id}`), {
        headers: { 'X-API-Key': operatorKey },
      });
      expect(read.body).toEqual({ ...created.body, key: null });

      const updated = await call<Record<string, unknown>>('PUT', mgmt(`/ApiKeys/${created.body.id}`), {
        headers: { 'X-API-Key': operatorKey },
        body: { tag: 'renamed' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual(expect.objectContaining({ id: created.body.id, tag: 'renamed', key: null }));
      // The new key authenticates on interface A too.
      expect(
        (await call('GET', admin('/applications/none'), { headers: { 'X-API-Key': created.body.key } })).status,
      ).toBe(404);
    });

    it('answers OData error bodies: unknown field, wrong type, unknown id, bad api-version, no key, too large', async () => {
      const h = { 'X-API-Key': operatorKey };
      expectODataError(
        await call('POST', mgmt('/ApiKeys'), { headers: h, body: { tag: 'x', colour: 'red' } }),
        400,
        'ValidationFailed',
        'colour',
      );
      expectODataError(
        await call('POST', mgmt('/ApiKeys'), { headers: h, body: { tag: 5 } }),
        400,
        'ValidationFailed',
        'tag',
      );
      expectODataError(
        await call('POST', mgmt('/ApiKeys'), {
          headers: { ...h, 'content-type': 'application/json' },
          raw: '{"tag":',
          body: undefined,
        }),
        400,
        'ValidationFailed',
      );
      expectODataError(await call('GET', mgmt(`/ApiKeys/${randomUUID()}`), { headers: h }), 404, 'NotFound');
      expectODataError(await call('GET', mgmt('/ApiKeys/not-a-uuid'), { headers: h }), 404, 'NotFound');
      expectODataError(
        await call('GET', mgmt('/ApiKeys?api-version=2.0'), { headers: h }),
        400,
        'ValidationFailed',
        'api-version',
      );
      expect((await call('GET', mgmt('/ApiKeys?api-version=1.0'), { headers: h })).status).toBe(200);
      expectODataError(await call('GET', mgmt('/ApiKeys')), 401, 'Unauthorized');
      expectODataError(
        await call('POST', mgmt('/ApiKeys'), { headers: h, body: { tag: 'x'.repeat(1024 * 1024 + 10) } }),
        413,
        'PayloadTooLarge',
      );
    });

    it('never shows another organization its keys', async () => {
      const foreignKey = await insertOrganizationWithKey(db.url);
      const mine = await call<{ value: Array<{ id: string }> }>('GET', mgmt('/ApiKeys'), {
        headers: { 'X-API-Key': operatorKey },
      });
      const theirs = await call<{ value: Array<{ id: string }> }>('GET', mgmt('/ApiKeys'), {
        headers: { 'X-API-Key': foreignKey },
      });
      expect(theirs.body.value).toHaveLength(1);
      const myIds = new Set(mine.body.value.map((k) => k.id));
      expect(theirs.body.value.some((k) => myIds.has(k.id))).toBe(false);
      const firstOfMine = mine.body.value[0]!.id;
      expectODataError(
        await call('GET', mgmt(`/ApiKeys/${firstOfMine}`), { headers: { 'X-API-Key': foreignKey } }),
        404,
        'NotFound',
      );
      expectODataError(
        await call('PUT', mgmt(`/ApiKeys/${firstOfMine}`), {
          headers: { 'X-API-Key': foreignKey },
          body: { tag: 'stolen' },
        }),
        404,
        'NotFound',
      );
    });

    it('serves its OpenAPI document', async () => {
      const doc = await call<{ paths: Record<string, Record<string, unknown>> }>('GET', mgmt('/openapi.json'));
      expect(doc.status).toBe(200);
      expect(Object.keys(doc.body.paths['/ApiKeys'] ?? {}).sort()).toEqual(['get', 'post']);
      expect(Object.keys(doc.body.paths['/ApiKeys/{id}'] ?? {}).sort()).toEqual(['get', 'patch', 'put']);
    });
  });

  describe('operations', () => {
    it('every service reports health, readiness of its real dependencies, and Prometheus metrics', async () => {
      for (const s of [management, registry, gateway]) {
        expect((await call('GET', `${s.url}/healthz`)).status).toBe(200);
        const ready = await call<{ checks: Record<string, string> }>('GET', `${s.url}/readyz`);
        expect(ready.status).toBe(200);
        expect(ready.body.checks.nats).toBe('ok');
        const metrics = await call('GET', `${s.url}/metrics`);
        expect(metrics.text).toContain('http_request_duration_seconds');
        expect(metrics.text).toContain('process_cpu_user_seconds_total');
      }
      expect(
        (await call<{ checks: Record<string, string> }>('GET', `${management.url}/readyz`)).body.checks.postgres,
      ).toBe('ok');
      expect((await call<{ checks: Record<string, string> }>('GET', `${registry.url}/readyz`)).body.checks.redis).toBe(
        'ok',
      );
    });

    it('refuses callers outside the admin CIDR allowlist with 403', async () => {
      const restricted = await spawnService('admin-gateway', {
        ...env,
        HTTP_PORT: String(await freePort()),
        ADMIN_CIDR_ALLOWLIST: '10.0.0.0/8',
      });
      try {
        expectProblem(
          await call('GET', `${restricted.url}/admin/api/v1.0/applications`, { headers: { 'X-API-Key': operatorKey } }),
          403,
          'Forbidden',
        );
      } finally {
        await restricted.stop();
      }
    });

    it('answers 504 while the registry hangs and 503 while it is down, then recovers without a gateway restart', async () => {
      const h = { 'X-API-Key': operatorKey };
      expect((await call('GET', admin('/applications'), { headers: h })).status).toBe(200);

      process.kill(registry.pid, 'SIGSTOP');
      try {
        expectProblem(await call('GET', admin('/applications'), { headers: h }), 504, 'Timeout');
      } finally {
        process.kill(registry.pid, 'SIGCONT');
      }

      await registry.stop('SIGKILL');
      const down = await call('GET', admin('/applications'), { headers: h });
      expectProblem(down, 503, 'Unavailable');
      expect(down.headers.get('retry-after')).toBe('1');

      registry = await spawnService('runtime-registry', { ...env, HTTP_PORT: String(registryPort) });
      await waitFor(async () => (await call('GET', admin('/applications'), { headers: h })).status === 200, {
        timeoutMs: 10000,
      });
      expect((await call('GET', admin('/applications'), { headers: h })).body).toEqual(
        expect.arrayContaining([`app-${ns}`]),
      );
    });

    it('shuts down gracefully on SIGTERM', async () => {
      const extra = await spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) });
      const exit = await extra.stop('SIGTERM');
      expect(exit).toEqual({ code: 0, signal: null });
      expect(extra.output()).toContain('SIGTERM received, shutting down');
    });
  });
});

async function queryOne(url: string, sql: string, params: unknown[]): Promise<Record<string, any>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows[0] as Record<string, any>;
  } finally {
    await client.end();
  }
}

/** A second organization with a key of its own, made the way management-api stores them. */
async function insertOrganizationWithKey(url: string): Promise<string> {
  const key = `sb_${randomUUID().replace(/-/g, '')}`;
  const orgId = randomUUID();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const now = Date.now();
    await client.query(
      'INSERT INTO management.organization (id, name, created_on, modified_on) VALUES ($1, $2, $3, $3)',
      [orgId, 'other', now],
    );
    await client.query(
      'INSERT INTO management.api_key (id, organization_id, key_hash, tag, operator, created_on, created_by, modified_on, modified_by) VALUES ($1, $2, $3, $4, false, $5, $6, $5, $6)',
      [randomUUID(), orgId, createHash('sha256').update(key).digest('hex'), 'other', now, 'test'],
    );
  } finally {
    await client.end();
  }
  return key;
}
