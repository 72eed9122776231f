/**
 * media-agent beside a real Janus: its Janus appears on interface A as a media server with the
 * version Janus reports, and the configured capacity, region and addresses; a crashed or hung
 * Janus makes it gone at once; a restarted Janus brings it back. Real NATS, Redis, PostgreSQL
 * (management-api issues the API key), runtime-registry and admin-gateway, each its own process.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { RuntimeSubjects, type Heartbeat } from '@switchboard/contracts';
import {
  createTestDatabase,
  findApp,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { checkJanusAdmin } from '../../apps/media-agent/src/janus/janus-admin.js';
import { startTestJanus, type TestJanus } from '../../tools/testing/janus.js';

const run = promisify(execFile);
const SESSION_TIMEOUT_SECONDS = 2;

interface ListedMediaServer {
  id: string;
  active: boolean;
  computer: { hostName: string; ipAddresses: string[]; region: string | null; version: string | null };
}

describe('media-agent with a real Janus', () => {
  const servers = testServers();
  const ns = testNamespace('media_agent');
  const mediaServerId = randomUUID();
  const processes: SpawnedService[] = [];
  let db: TestDatabase;
  let janus: TestJanus;
  let agent: SpawnedService;
  let gateway: SpawnedService;
  let key: string;
  let nc: NatsConnection;
  const heartbeats: Heartbeat[] = [];

  async function listed(): Promise<ListedMediaServer | undefined> {
    const res = await fetch(`${gateway.url}/admin/api/v1.0/mediaservers`, { headers: { 'X-API-Key': key } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ListedMediaServer[] | { value: ListedMediaServer[] };
    return (Array.isArray(body) ? body : body.value).find((s) => s.id === mediaServerId);
  }

  beforeAll(async () => {
    [db, janus] = await Promise.all([
      createTestDatabase('media_agent'),
      startTestJanus({ sessionTimeoutSeconds: SESSION_TIMEOUT_SECONDS }),
    ]);
    const env = serviceTestEnv(ns, db.url);
    nc = await connect({ servers: servers.natsUrl });
    nc.subscribe(`${ns}.${RuntimeSubjects.heartbeat}`, {
      callback: (_err, msg) => {
        const body = msg.json<{ data: Heartbeat }>();
        if (body.data.server.id === mediaServerId) heartbeats.push(body.data);
      },
    });
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    key = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    const registryEnv = { ...env, SERVER_HEARTBEAT_TIMEOUT_SECONDS: '2', REGISTRY_SWEEP_INTERVAL_MS: '200' };
    const started = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...registryEnv, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('media-agent', {
        ...env,
        HTTP_PORT: String(await freePort()),
        JANUS_URL: janus.wsUrl,
        JANUS_ADMIN_URL: janus.adminUrl,
        JANUS_ADMIN_SECRET: janus.adminSecret,
        JANUS_ROOM_ADMIN_KEY: janus.roomAdminKey,
        JANUS_REQUEST_TIMEOUT_MS: '500',
        JANUS_RECONNECT_MIN_MS: '50',
        JANUS_RECONNECT_MAX_MS: '300',
        JANUS_KEEPALIVE_SECONDS: '1',
        MEDIA_SERVER_ID: mediaServerId,
        MEDIA_SERVER_REGION: 'eu-test',
        MEDIA_SERVER_CAPACITY: '37',
        MEDIA_SERVER_ADDRESSES: 'udp://127.0.0.1:40000-40999',
        MEDIA_HEARTBEAT_INTERVAL_MS: '200',
      }),
    ]);
    processes.push(...started);
    [, , gateway, agent] = started as [SpawnedService, SpawnedService, SpawnedService, SpawnedService];
  }, 60000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await janus?.stop();
    await nc?.close();
    await db?.drop();
  });

  it('registers its Janus with the version from Janus info and the configured capacity, region and addresses', async () => {
    const server = await waitFor(async () => ((await listed())?.active ? listed() : null));
    expect(server).toMatchObject({
      id: mediaServerId,
      active: true,
      computer: { version: '1.1.2', region: 'eu-test', ipAddresses: ['127.0.0.1'] },
    });
    const beat = heartbeats.at(-1)!;
    expect(beat).toMatchObject({
      role: 'mediaserver',
      server: {
        id: mediaServerId,
        version: '1.1.2',
        capacity: 37,
        region: 'eu-test',
        addresses: ['udp://127.0.0.1:40000-40999'],
        active: true,
      },
    });
  });

  it('is ready with the Janus API and the Admin API answering; a wrong admin secret is refused', async () => {
    const readyz = await fetch(`${agent.url}/readyz`);
    expect(readyz.status).toBe(200);
    expect(((await readyz.json()) as { checks: Record<string, string> }).checks).toMatchObject({
      janus: 'ok',
      'janus-admin': 'ok',
      nats: 'ok',
    });
    const admin = { url: janus.adminUrl, requestTimeoutMs: 2000 };
    // The agent's own session is there.
    expect(await checkJanusAdmin({ ...admin, secret: janus.adminSecret })).toBeGreaterThanOrEqual(1);
    await expect(checkJanusAdmin({ ...admin, secret: 'wrong' })).rejects.toThrow(/Unauthorized/);
  });

  it('keeps its Janus session alive past the session timeout', async () => {
    // Janus's watchdog looks every 2 s: an idle session is gone within twice its timeout.
    await new Promise((resolve) => setTimeout(resolve, (2 * SESSION_TIMEOUT_SECONDS + 3) * 1000));
    expect(agent.output()).not.toContain('lost Janus');
    expect((await listed())?.active).toBe(true);
  });

  it('announces the server gone at once when Janus is killed, and back when Janus restarts', async () => {
    await janus.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor(async () => (await listed())?.active === false, { timeoutMs: 2000 });
    // Gone at once (the agent's `active: false`), well before the registry's 2 s heartbeat timeout.
    expect(Date.now() - killedAt).toBeLessThan(1500);
    expect(heartbeats.at(-1)?.server.active).toBe(false);
    const readyz = await fetch(`${agent.url}/readyz`);
    expect(readyz.status).toBe(503);
    await readyz.body?.cancel();

    await janus.restart();
    await waitFor(async () => (await listed())?.active === true, { timeoutMs: 5000 });
    expect((await fetch(`${agent.url}/readyz`)).status).toBe(200);
  });

  it('announces the server gone when Janus hangs, and back when it answers again', async () => {
    process.kill(janus.pid, 'SIGSTOP');
    try {
      await waitFor(async () => (await listed())?.active === false, { timeoutMs: 3000 });
    } finally {
      process.kill(janus.pid, 'SIGCONT');
    }
    await waitFor(async () => (await listed())?.active === true, { timeoutMs: 5000 });
  });
});
