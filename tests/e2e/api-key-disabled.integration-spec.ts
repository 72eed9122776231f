/**
 * A disabled API key is refused on interface A with the 401 of an unknown key, although the
 * gateway remembers key verdicts far longer than the test: only the change notice can do it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
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
import { call, expectProblem } from './http.js';

const run = promisify(execFile);
const LONG_CACHE_MS = '300000';

describe('a disabled API key on interface A', () => {
  const ns = testNamespace('keydis_e2e');
  let db: TestDatabase;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let gateway: SpawnedService;
  let operatorKey: string;

  const mgmt = (method: string, path: string, key: string, body?: unknown) =>
    call(method, `${management.url}${path}`, {
      headers: { 'X-API-Key': key },
      ...(body === undefined ? {} : { body }),
    });
  const admin = (path: string, key: string) =>
    call('GET', `${gateway.url}/admin/api/v1.0${path}`, { headers: { 'X-API-Key': key } });

  beforeAll(async () => {
    db = await createTestDatabase('keydis_e2e');
    // Refusals remembered for a minute: only the notice can explain the re-enabled key's acceptance.
    const env = {
      ...serviceTestEnv(ns, db.url),
      API_KEY_CACHE_TTL_MS: LONG_CACHE_MS,
      API_KEY_NEGATIVE_CACHE_TTL_MS: '60000',
    };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    operatorKey = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    processes.push(
      ...(await Promise.all([
        spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
        spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
        spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
      ])),
    );
    [management, , gateway] = processes as [SpawnedService, SpawnedService, SpawnedService];
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await db?.drop();
  });

  it('is refused at once on both interfaces with the answer of an unknown key; enabled again, it works', async () => {
    const created = await mgmt('POST', '/ApiKeys', operatorKey, { tag: 'soon disabled' });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    // The gateway now remembers the key as valid (for 5 minutes).
    expect((await admin('/applications', key)).status).toBe(200);

    expect((await mgmt('PATCH', `/ApiKeys/${created.body.id}`, operatorKey, { disabled: true })).status).toBe(200);
    await waitFor(async () => (await admin('/applications', key)).status === 401, { timeoutMs: 3000 });
    const refused = await admin('/applications', key);
    const unknown = await admin('/applications', 'sb_not-a-key-of-anyone-at-all');
    expectProblem(refused, 401, 'Unauthorized');
    expect({ ...refused.body, instance: null, correlationId: null }).toEqual({
      ...unknown.body,
      instance: null,
      correlationId: null,
    });
    expect((await mgmt('GET', '/ApiKeys', key)).status).toBe(401);
    // The operator key of the same organization is untouched.
    expect((await admin('/applications', operatorKey)).status).toBe(200);

    expect((await mgmt('PATCH', `/ApiKeys/${created.body.id}`, operatorKey, { disabled: false })).status).toBe(200);
    await waitFor(async () => (await admin('/applications', key)).status === 200, { timeoutMs: 3000 });
    expect((await mgmt('GET', '/ApiKeys', key)).status).toBe(200);
  });
});
