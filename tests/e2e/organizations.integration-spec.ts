/**
 * Tenant provisioning by an operator, every service real and separate: the operator key creates a
 * customer organization with its first API key through interface B; that key sees only its own
 * records on both interfaces; disabling the organization refuses its key on both interfaces and its
 * client tokens at /sync register (the caches of key verdicts and resolved applications are long
 * here, so only the change notices can make that happen); enabling it again restores access.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  createTestDatabase,
  findApp,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { SyncClient } from '../../tools/simulator/src/index.mjs';
import { call, expectODataError, expectProblem } from './http.js';

const run = promisify(execFile);
/** Far longer than the test: a refusal seen must come from a change notice, not from an expiry. */
const LONG_CACHE_MS = '300000';

describe('organizations provisioned by an operator', () => {
  const servers = testServers();
  const ns = testNamespace('orgs_e2e');
  let db: TestDatabase;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let gateway: SpawnedService;
  let operatorKey: string;
  let operatorOrg: string;
  const operatorApp = `op-app-${ns}`.replace(/_/g, '-');
  const customerApp = `customer-app-${ns}`.replace(/_/g, '-');
  let customer: { id: string; key: string; keyId: string; configId: string };
  const sockets: Array<InstanceType<typeof SyncClient>> = [];

  const mgmt = (method: string, path: string, key: string, body?: unknown) =>
    call(method, `${management.url}${path}`, {
      headers: { 'X-API-Key': key },
      ...(body === undefined ? {} : { body }),
    });
  const admin = (path: string, key: string) =>
    call('GET', `${gateway.url}/admin/api/v1.0${path}`, { headers: { 'X-API-Key': key } });

  async function createApplication(key: string, applicationId: string): Promise<string> {
    const created = await mgmt('POST', '/ApplicationConfigs', key, { applicationId });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  async function clientToken(key: string, configId: string, clientId: string): Promise<string> {
    const answer = await mgmt('POST', `/ApplicationConfigs/${configId}/Token`, key, {
      userId: 'u1',
      deviceId: 'd1',
      clientId,
      channelClaims: [{ id: 'lobby' }],
    });
    expect(answer.status).toBe(200);
    return answer.body.value as string;
  }

  /** Registers a client over /sync: its result, or the refusal's error code. */
  async function register(token: string): Promise<{ ok: true } | { ok: false; code: string }> {
    const sync = await SyncClient.connect(`${gateway.url!.replace('http', 'ws')}/sync`);
    sockets.push(sync);
    try {
      await sync.request('register', { token });
      return { ok: true };
    } catch (e) {
      return { ok: false, code: (e as { code: string }).code };
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase('orgs_e2e');
    const env = {
      ...serviceTestEnv(ns, db.url),
      API_KEY_CACHE_TTL_MS: LONG_CACHE_MS,
      APPLICATION_CACHE_TTL_MS: LONG_CACHE_MS,
    };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    ({ apiKey: operatorKey, organizationId: operatorOrg } = JSON.parse(boot.stdout) as {
      apiKey: string;
      organizationId: string;
    });
    const started = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
    ]);
    processes.push(...started);
    [management, , gateway] = started as [SpawnedService, SpawnedService, SpawnedService];
    const operatorConfig = await createApplication(operatorKey, operatorApp);
    assert.deepEqual(await register(await clientToken(operatorKey, operatorConfig, 'op-client')), { ok: true });
  });

  afterAll(async () => {
    for (const sync of sockets) void sync.terminate();
    await Promise.all(processes.map((p) => p.stop()));
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await db?.drop();
  });

  it('the operator creates an organization and its first API key in one call; the key value is shown once', async () => {
    const body = {
      name: 'Customer One',
      industry: 'Education',
      address: { line1: '1 Main St', city: 'Lyon', country: 'FR' },
      primaryContact: { firstName: 'Ada', lastName: 'Lovelace', emailAddress: 'ada@customer.test' },
    };
    const created = await mgmt('POST', '/Organizations', operatorKey, body);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ...body,
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      paymentMethodId: null,
      vatNumber: null,
      userIds: [],
      additionalContacts: null,
      disabled: false,
      createdOn: expect.any(Number),
      modifiedOn: expect.any(Number),
      apiKey: expect.objectContaining({ id: expect.any(String), key: expect.stringMatching(/^sb_/), tag: 'first key' }),
    });
    const key = created.body.apiKey.key as string;
    customer = {
      id: created.body.id,
      key,
      keyId: created.body.apiKey.id,
      configId: await createApplication(key, customerApp),
    };
    const keys = await mgmt('GET', '/ApiKeys', key);
    expect(keys.body.value).toEqual([expect.objectContaining({ id: customer.keyId, key: null, tag: 'first key' })]);
  });

  it('refuses creation to a non-operator key, and bodies that fail validation', async () => {
    expectODataError(await mgmt('POST', '/Organizations', customer.key, { name: 'Sneaky' }), 403, 'Forbidden');
    expectODataError(
      await mgmt('POST', '/Organizations', operatorKey, { name: 'X', color: 'red' }),
      400,
      'ValidationFailed',
    );
    expectODataError(await mgmt('POST', '/Organizations', operatorKey, {}), 400, 'ValidationFailed');
    expectODataError(
      await mgmt('POST', '/Organizations', operatorKey, { name: '  ' }),
      400,
      'ValidationFailed',
      'name',
    );
    expectODataError(
      await mgmt('POST', '/Organizations', operatorKey, { name: 'x'.repeat(201) }),
      400,
      'ValidationFailed',
      'name',
    );
    expectODataError(
      await mgmt('POST', '/Organizations', operatorKey, { name: 'X', paymentMethodId: operatorOrg }),
      400,
      'ValidationFailed',
      'paymentMethodId',
    );
    expect(
      (
        await mgmt(
          'GET',
          `/Organizations?$filter=${encodeURIComponent("name eq 'Sneaky' or name eq 'X'")}`,
          operatorKey,
        )
      ).body.value,
    ).toEqual([]);
  });

  it("the new organization's key sees only its own records on interface B; the operator lists every organization", async () => {
    expect((await mgmt('GET', '/Organizations', customer.key)).body.value.map((o: { id: string }) => o.id)).toEqual([
      customer.id,
    ]);
    expect(
      (await mgmt('GET', '/ApplicationConfigs', customer.key)).body.value.map(
        (c: { applicationId: string }) => c.applicationId,
      ),
    ).toEqual([customerApp]);
    const changes = (await mgmt('GET', '/ChangeRecords?$top=1000', customer.key)).body.value as Array<{
      entityId: string;
    }>;
    expect(new Set(changes.map((c) => c.entityId))).toEqual(new Set([customer.id, customer.keyId, customer.configId]));
    expectODataError(await mgmt('GET', `/Organizations/${operatorOrg}`, customer.key), 404, 'NotFound');
    const all = await mgmt('GET', `/Organizations?$orderby=createdOn&$count=true`, operatorKey);
    expect(all.body['@odata.count']).toBe(2);
    expect(all.body.value.map((o: { id: string }) => o.id)).toEqual([operatorOrg, customer.id]);
    expect((await mgmt('GET', `/Organizations/${customer.id}`, operatorKey)).body.name).toBe('Customer One');
  });

  it("the new organization's key sees only its own applications on interface A", async () => {
    expect(await register(await clientToken(customer.key, customer.configId, 'customer-client'))).toEqual({ ok: true });
    await waitFor(async () => (await admin('/applications', customer.key)).body?.length === 1, { timeoutMs: 5000 });
    expect((await admin('/applications', customer.key)).body).toEqual([customerApp]);
    expectProblem(await admin(`/applications/${operatorApp}`, customer.key), 404, 'NotFound');
    expect((await admin(`/applications/${customerApp}`, customer.key)).status).toBe(200);
  });

  it('only an operator disables an organization, never its own', async () => {
    expectODataError(
      await mgmt('PATCH', `/Organizations/${customer.id}`, customer.key, { disabled: true }),
      403,
      'Forbidden',
      'disabled',
    );
    // Sending the current value back (a GET, then a PUT) is no change.
    expect(
      (await mgmt('PATCH', `/Organizations/${customer.id}`, customer.key, { disabled: false, industry: 'Research' }))
        .status,
    ).toBe(200);
    expectODataError(
      await mgmt('PATCH', `/Organizations/${operatorOrg}`, operatorKey, { disabled: true }),
      409,
      'Conflict',
      'disabled',
    );
    expect((await mgmt('GET', '/ApiKeys', operatorKey)).status).toBe(200);
  });

  it("after disabling, the organization's key is refused on both interfaces and its client tokens at /sync register; enabling restores both", async () => {
    // Minted while enabled; the gateway has the application resolved and the key verified in its caches.
    const token = await clientToken(customer.key, customer.configId, 'late-client');
    expect((await admin('/applications', customer.key)).status).toBe(200);

    const disabled = await mgmt('PATCH', `/Organizations/${customer.id}`, operatorKey, { disabled: true });
    expect(disabled.status).toBe(200);
    expect(disabled.body.disabled).toBe(true);

    expectODataError(await mgmt('GET', '/ApiKeys', customer.key), 403, 'Forbidden');
    await waitFor(async () => (await admin('/applications', customer.key)).status === 403, { timeoutMs: 3000 });
    expectProblem(await admin('/applications', customer.key), 403, 'Forbidden');
    await waitFor(
      async () => {
        const answer = await register(token);
        return !answer.ok && answer.code === 'ApplicationRefused';
      },
      { timeoutMs: 3000 },
    );
    expect(
      (
        await mgmt('GET', `/Organizations?$filter=${encodeURIComponent('disabled eq true')}`, operatorKey)
      ).body.value.map((o: { id: string }) => o.id),
    ).toEqual([customer.id]);
    // The operator and its applications are unaffected.
    expect((await admin('/applications', operatorKey)).status).toBe(200);

    expect((await mgmt('PATCH', `/Organizations/${customer.id}`, operatorKey, { disabled: false })).body.disabled).toBe(
      false,
    );
    expect((await mgmt('GET', '/ApiKeys', customer.key)).status).toBe(200);
    await waitFor(async () => (await admin('/applications', customer.key)).status === 200, { timeoutMs: 3000 });
    await waitFor(async () => (await register(token)).ok, { timeoutMs: 3000 });
  });

  it("writes change records of the creation and of each disable and enable, in the organization's log and the operator's; the key value redacted", async () => {
    const operatorKeyId = ((await mgmt('GET', '/ApiKeys', operatorKey)).body.value as Array<{ id: string }>)[0]!.id;
    for (const key of [customer.key, operatorKey]) {
      const log = (
        await mgmt(
          'GET',
          `/ChangeRecords?$filter=${encodeURIComponent(`entityId eq '${customer.id}' and propertyName eq 'disabled'`)}&$orderby=changedOn`,
          key,
        )
      ).body.value as Array<Record<string, unknown>>;
      expect(log.map((c) => [c.type, c.oldValue, c.newValue, c.changedBy])).toEqual([
        ['Create', null, 'false', operatorKeyId],
        ['Update', 'false', 'true', operatorKeyId],
        ['Update', 'true', 'false', operatorKeyId],
      ]);
    }
    const name = (
      await mgmt(
        'GET',
        `/ChangeRecords?$filter=${encodeURIComponent(`entityId eq '${customer.id}' and propertyName eq 'name'`)}`,
        customer.key,
      )
    ).body.value;
    expect(name).toEqual([expect.objectContaining({ type: 'Create', newValue: 'Customer One' })]);
    const keyLog = (
      await mgmt('GET', `/ChangeRecords?$filter=${encodeURIComponent(`entityId eq '${customer.keyId}'`)}`, customer.key)
    ).body.value as Array<Record<string, unknown>>;
    expect(keyLog.map((c) => [c.propertyName, c.newValue])).toEqual(
      expect.arrayContaining([
        ['key', '<redacted>'],
        ['tag', 'first key'],
      ]),
    );
  });
});
