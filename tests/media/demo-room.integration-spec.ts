/**
 * The demo room's backend against the real management-api (interface B): it finds or creates the
 * application config of its application and gets client tokens from the Token action with its key.
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
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';

const run = promisify(execFile);

interface Issued {
  token: string;
  userId: string;
  clientId: string;
  applicationId: string;
}

describe('demo room backend with the real management API', () => {
  const namespace = testNamespace('demo-room');
  const applicationId = `demo-${namespace}`;
  let db: TestDatabase;
  let management: SpawnedService;
  let demoRoom: SpawnedService;
  let apiKey: string;

  const ask = async (body: unknown) => {
    const response = await fetch(`${demoRoom.url!}/api/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Issued & { detail?: string } };
  };
  const configsOfApplication = async () => {
    const filter = encodeURIComponent(`applicationId eq '${applicationId}'`);
    const response = await fetch(`${management.url!}/ApplicationConfigs?$filter=${filter}`, {
      headers: { 'x-api-key': apiKey },
    });
    return ((await response.json()) as { value: Array<{ id: string; tag: string | null }> }).value;
  };

  beforeAll(async () => {
    db = await createTestDatabase(namespace);
    const env = serviceTestEnv(namespace, db.url);
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    apiKey = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    management = await spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) });
    demoRoom = await spawnService('demo-room', {
      HTTP_PORT: String(await freePort()),
      DEMO_MANAGEMENT_URL: management.url!,
      DEMO_API_KEY: apiKey,
      DEMO_APPLICATION_ID: applicationId,
    });
  }, 60000);

  afterAll(async () => {
    await demoRoom?.stop();
    await management?.stop();
    await db?.drop();
  });

  it('creates the application config once and issues register tokens claiming the room', async () => {
    expect(await configsOfApplication()).toEqual([]);
    const first = await ask({ name: 'Ann', room: 'standup' });
    expect(first.status).toBe(200);
    const [config] = await configsOfApplication();
    expect(config).toMatchObject({ tag: 'demo-room' });

    const [, payload] = first.body.token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Record<string, unknown>;
    expect(claims).toMatchObject({
      type: 'register',
      applicationId,
      userId: first.body.userId,
      clientId: first.body.clientId,
      channels: [{ id: 'standup', action: 'join' }],
    });

    // A refresh for the same client: the same ids, and still one config.
    const refreshed = await ask({ name: 'Ann', room: 'standup', clientId: first.body.clientId });
    expect(refreshed.status).toBe(200);
    const refreshedClaims = JSON.parse(
      Buffer.from(refreshed.body.token.split('.')[1]!, 'base64').toString('utf8'),
    ) as Record<string, unknown>;
    expect(refreshedClaims).toMatchObject({ clientId: first.body.clientId, userId: first.body.userId });
    expect(await configsOfApplication()).toHaveLength(1);
  });

  it('refuses bad input with a 400 before asking interface B', async () => {
    const refused = await ask({ name: 'Ann', room: 'a b' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('room may hold only letters');
  });

  it('answers 502 when interface B refuses its key', async () => {
    const wrongKey = await spawnService('demo-room', {
      HTTP_PORT: String(await freePort()),
      DEMO_MANAGEMENT_URL: management.url!,
      DEMO_API_KEY: 'sb_not_a_key',
      DEMO_APPLICATION_ID: applicationId,
    });
    try {
      const response = await fetch(`${wrongKey.url!}/api/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Ann', room: 'standup' }),
      });
      expect(response.status).toBe(502);
      expect(((await response.json()) as { detail: string }).detail).toMatch(
        /^interface B refused the token request: HTTP 401/,
      );
    } finally {
      await wrongKey.stop();
    }
  });
});
