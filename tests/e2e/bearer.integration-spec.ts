/**
 * OAuth2 bearer tokens on both interfaces: JWTs signed by a test issuer whose JWKS is served on
 * loopback, checked for signature, issuer, audience and expiry; the organization claim scopes the
 * caller; the operator scope makes an operator credential on interface A.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type KeyObject } from 'jose';
import {
  createTestDatabase,
  findApp,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import pg from 'pg';
import { insertOrganizationWithKey } from '../management/support.js';
import { call, expectODataError, expectProblem } from './http.js';

const run = promisify(execFile);
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'switchboard';

describe('bearer tokens', () => {
  const ns = testNamespace('bearer');
  let db: TestDatabase;
  let jwks: http.Server;
  let privateKey: CryptoKey | KeyObject;
  let otherKey: CryptoKey | KeyObject;
  let management: SpawnedService;
  let gateway: SpawnedService;
  let organizationId: string;
  let operatorKey: string;

  /** `expiresIn: null` leaves out `exp`. */
  const sign = (
    claims: Record<string, unknown>,
    options: {
      key?: CryptoKey | KeyObject;
      issuer?: string;
      audience?: string;
      expiresIn?: string | number | null;
    } = {},
  ) => {
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .setIssuer(options.issuer ?? ISSUER)
      .setAudience(options.audience ?? AUDIENCE)
      .setSubject('user-42')
      .setIssuedAt();
    if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '5m');
    return jwt.sign(options.key ?? privateKey);
  };

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('RS256')).privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
    jwks = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const oauth = {
      OAUTH_ISSUER: ISSUER,
      OAUTH_AUDIENCE: AUDIENCE,
      OAUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
    };

    db = await createTestDatabase('bearer');
    const env = { ...serviceTestEnv(ns, db.url), ...oauth };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    ({ organizationId, apiKey: operatorKey } = JSON.parse(boot.stdout) as { organizationId: string; apiKey: string });
    const started = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
    ]);
    [management, gateway, registry] = started as [SpawnedService, SpawnedService, SpawnedService];
  });
  let registry: SpawnedService | undefined;

  afterAll(async () => {
    await Promise.all([management?.stop(), gateway?.stop(), registry?.stop()]);
    await new Promise((r) => jwks?.close(r));
    await db?.drop();
  });

  it('interface B: a user token of the organization reads its records; bad tokens are 401', async () => {
    const good = await sign({ org_id: organizationId });
    const list = await call<{ value: unknown[] }>('GET', `${management.url}/ApiKeys`, {
      headers: { Authorization: `Bearer ${good}` },
    });
    expect(list.status).toBe(200);
    expect(list.body.value.length).toBeGreaterThanOrEqual(1);
    const created = await call<{ createdBy: string }>('POST', `${management.url}/ApiKeys`, {
      headers: { Authorization: `Bearer ${good}` },
      body: { tag: 'made by a user' },
    });
    expect(created.status).toBe(201);
    expect(created.body.createdBy).toBe('user-42');

    for (const bad of [
      await sign({ org_id: organizationId }, { key: otherKey }),
      await sign({ org_id: organizationId }, { audience: 'someone-else' }),
      await sign({ org_id: organizationId }, { issuer: 'https://evil.test' }),
      await sign({ org_id: organizationId }, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      // No `exp`: a token that would never expire.
      await sign({ org_id: organizationId }, { expiresIn: null }),
      'not.a.jwt',
    ]) {
      expectODataError(
        await call('GET', `${management.url}/ApiKeys`, { headers: { Authorization: `Bearer ${bad}` } }),
        401,
        'Unauthorized',
      );
    }
    expectODataError(
      await call('GET', `${management.url}/ApiKeys`, { headers: { Authorization: `Bearer ${await sign({})}` } }),
      403,
      'Forbidden',
    );
  });

  it('interface B: the scheme name is case-insensitive', async () => {
    const good = await sign({ org_id: organizationId });
    for (const scheme of ['bearer', 'BEARER', 'beArer']) {
      expect(
        (await call('GET', `${management.url}/ApiKeys`, { headers: { Authorization: `${scheme} ${good}` } })).status,
      ).toBe(200);
    }
    expectODataError(
      await call('GET', `${management.url}/ApiKeys`, {
        headers: { Authorization: `bearer ${await sign({ org_id: organizationId }, { expiresIn: null })}` },
      }),
      401,
      'Unauthorized',
    );
  });

  it('interface B: a token of another organization sees only its own rows', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const { orgId } = await insertOrganizationWithKey(
        async (text, params) => (await pool.query(text, params)).rows,
        'organization B',
      );
      const other = await sign({ org_id: orgId });
      const list = await call<{ value: Array<{ tag: string }> }>('GET', `${management.url}/ApiKeys`, {
        headers: { Authorization: `Bearer ${other}` },
      });
      expect(list.status).toBe(200);
      expect(list.body.value.map((k) => k.tag)).toEqual(['organization B key']);
      // Upper-case spelling of the same organization: the same caller.
      const upper = await sign({ org_id: orgId.toUpperCase() });
      const created = await call<{ id: string }>('POST', `${management.url}/ApiKeys`, {
        headers: { Authorization: `Bearer ${upper}` },
        body: { tag: 'made by B' },
      });
      expect(created.status).toBe(201);
      expect(
        (await pool.query('SELECT organization_id FROM management.api_key WHERE id = $1', [created.body.id])).rows,
      ).toEqual([{ organization_id: orgId }]);
    } finally {
      await pool.end();
    }
  });

  it('interface B: a token whose organization claim is not an organization id, or names no organization that exists, is refused (403), reads and writes alike', async () => {
    for (const org of ['not-a-uuid', "x' OR '1'='1", '00000000-0000-4000-8000-000000000000']) {
      const token = await sign({ org_id: org });
      const headers = { Authorization: `Bearer ${token}` };
      expectODataError(await call('GET', `${management.url}/ApiKeys`, { headers }), 403, 'Forbidden', null);
      expectODataError(await call('GET', `${management.url}/Organizations`, { headers }), 403, 'Forbidden', null);
      expectODataError(
        await call('POST', `${management.url}/ApiKeys`, { headers, body: { tag: 'never made' } }),
        403,
        'Forbidden',
        null,
      );
      expectODataError(
        await call('POST', `${management.url}/ApplicationConfigs`, { headers, body: { applicationId: 'never-made' } }),
        403,
        'Forbidden',
        null,
      );
    }
  });

  it('interface B: a token of a disabled organization is refused (403) until an operator enables it again', async () => {
    const created = await call<{ id: string }>('POST', `${management.url}/Organizations`, {
      headers: { 'X-API-Key': operatorKey },
      body: { name: 'Customer with users' },
    });
    expect(created.status).toBe(201);
    const headers = { Authorization: `Bearer ${await sign({ org_id: created.body.id })}` };
    expect((await call('GET', `${management.url}/ApiKeys`, { headers })).status).toBe(200);
    const setDisabled = (disabled: boolean) =>
      call('PATCH', `${management.url}/Organizations/${created.body.id}`, {
        headers: { 'X-API-Key': operatorKey },
        body: { disabled },
      });
    expect((await setDisabled(true)).status).toBe(200);
    expectODataError(await call('GET', `${management.url}/ApiKeys`, { headers }), 403, 'Forbidden', null);
    expect((await setDisabled(false)).status).toBe(200);
    expect((await call('GET', `${management.url}/ApiKeys`, { headers })).status).toBe(200);
  });

  it("interface A: the operator scope lists every application, an organization token its organization's; bad tokens are 401", async () => {
    const operator = await sign({ scope: 'switchboard:operator' });
    expect(
      (
        await call('GET', `${gateway.url}/admin/api/v1.0/applications`, {
          headers: { Authorization: `Bearer ${operator}` },
        })
      ).status,
    ).toBe(200);
    const tenant = await sign({ org_id: organizationId });
    const own = await call<string[]>('GET', `${gateway.url}/admin/api/v1.0/applications`, {
      headers: { Authorization: `Bearer ${tenant}` },
    });
    expect(own.status).toBe(200);
    expect(own.body).toEqual([]);
    expectProblem(
      await call('GET', `${gateway.url}/admin/api/v1.0/applications/anything`, {
        headers: { Authorization: `Bearer ${tenant}` },
      }),
      404,
      'NotFound',
    );
    expectProblem(
      await call('GET', `${gateway.url}/admin/api/v1.0/applications`, {
        headers: { Authorization: `Bearer ${await sign({ scope: 'switchboard:operator' }, { key: otherKey })}` },
      }),
      401,
      'Unauthorized',
    );
  });

  it('interface A: a token of a disabled organization is refused (403) until an operator enables it again', async () => {
    const created = await call<{ id: string }>('POST', `${management.url}/Organizations`, {
      headers: { 'X-API-Key': operatorKey },
      body: { name: 'Customer with a backend' },
    });
    expect(created.status).toBe(201);
    const headers = { Authorization: `Bearer ${await sign({ org_id: created.body.id })}` };
    const applications = () => call('GET', `${gateway.url}/admin/api/v1.0/applications`, { headers });
    expect((await applications()).status).toBe(200);
    const setDisabled = (disabled: boolean) =>
      call('PATCH', `${management.url}/Organizations/${created.body.id}`, {
        headers: { 'X-API-Key': operatorKey },
        body: { disabled },
      });
    expect((await setDisabled(true)).status).toBe(200);
    // The gateway remembered the organization as enabled for 10 s (API_KEY_CACHE_TTL_MS): the notice must drop that
    // sooner.
    await waitFor(async () => (await applications()).status === 403, {
      timeoutMs: 5000,
      description: 'the token refused',
    });
    expectProblem(await applications(), 403, 'Forbidden');
    expect((await setDisabled(false)).status).toBe(200);
    await waitFor(async () => (await applications()).status === 200, {
      timeoutMs: 5000,
      description: 'the token accepted again',
    });
  });

  it('interface A: the scheme name is case-insensitive', async () => {
    const operator = await sign({ scope: 'switchboard:operator' });
    for (const scheme of ['bearer', 'BEARER', 'beArer']) {
      expect(
        (
          await call('GET', `${gateway.url}/admin/api/v1.0/applications`, {
            headers: { Authorization: `${scheme} ${operator}` },
          })
        ).status,
      ).toBe(200);
    }
  });

  it('interface A: a token without exp is refused with 401', async () => {
    const forever = await sign({ scope: 'switchboard:operator' }, { expiresIn: null });
    expectProblem(
      await call('GET', `${gateway.url}/admin/api/v1.0/applications`, {
        headers: { Authorization: `Bearer ${forever}` },
      }),
      401,
      'Unauthorized',
    );
    expectProblem(
      await call('GET', `${gateway.url}/admin/api/v1.0/applications`, {
        headers: { Authorization: `bearer ${forever}` },
      }),
      401,
      'Unauthorized',
    );
  });
});
