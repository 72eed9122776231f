/**
 * The live runtime end to end, every service real and separate: management-api (application
 * config, client tokens, actions), two runtime-registry replicas on Redis, two admin-gateway
 * replicas (a client on replica 1 is read, messaged, muted and kicked through replica 2), clients
 * over the real /sync socket.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
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
import { call, expectProblem } from './http.js';

const run = promisify(execFile);

interface Push {
  type: string;
  [key: string]: unknown;
}

interface Client {
  sync: InstanceType<typeof SyncClient>;
  pushes: Push[];
  userId: string;
  deviceId: string;
  clientId: string;
}

describe('live runtime across services', () => {
  const servers = testServers();
  const ns = testNamespace('runtime_e2e');
  const applicationId = `app-${ns}`;
  let db: TestDatabase;
  let env: Record<string, string>;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let gateway1: SpawnedService;
  let gateway2: SpawnedService;
  let key: string;
  let configId: string;
  const clients: Client[] = [];

  const admin = (path: string) => `${gateway2.url}/admin/api/v1.0/applications/${applicationId}${path}`;
  const h = () => ({ 'X-API-Key': key });

  async function token(userId: string, deviceId: string, clientId: string, channels: string[]) {
    const answer = await call<{ value: string }>('POST', `${management.url}/ApplicationConfigs/${configId}/Token`, {
      headers: h(),
      body: { userId, deviceId, clientId, clientRoles: ['participant'], channelClaims: channels.map((id) => ({ id })) },
    });
    expect(answer.status).toBe(200);
    return answer.body.value;
  }

  async function connectClient(userId: string, deviceId: string, clientId: string, channelId: string): Promise<Client> {
    const sync = await SyncClient.connect(`${gateway1.url!.replace('http', 'ws')}/sync`);
    const client: Client = { sync, pushes: [], userId, deviceId, clientId };
    sync.onPush((p: Push) => client.pushes.push(p));
    await sync.request('register', { token: await token(userId, deviceId, clientId, [channelId]) });
    await sync.request('join', { channelId });
    const opened = await sync.request('connection.open', {
      channelId,
      type: 'peer',
      connectionId: `cn-${clientId}`,
      streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv', maxPixelCount: 921600 } },
    });
    for (const state of ['initializing', 'connecting', 'connected'])
      await sync.request('connection.state', { connectionId: opened.connectionId, state });
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    db = await createTestDatabase('runtime_e2e');
    env = serviceTestEnv(ns, db.url);
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    key = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    const started = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
    ]);
    processes.push(...started);
    [management, , , gateway1, gateway2] = started as [
      SpawnedService,
      SpawnedService,
      SpawnedService,
      SpawnedService,
      SpawnedService,
    ];
    const created = await call<{ id: string }>('POST', `${management.url}/ApplicationConfigs`, {
      headers: h(),
      body: { applicationId, tag: 'e2e' },
    });
    assert.equal(created.status, 201);
    configId = created.body.id;
    await connectClient('alice', 'alice-laptop', 'alice-1', 'lobby');
    await connectClient('bob', 'bob-phone', 'bob-1', 'lobby');
    await connectClient('carol', 'carol-tablet', 'carol-1', 'stage');
  });

  afterAll(async () => {
    for (const c of clients) await c.sync.terminate().catch(() => undefined);
    await Promise.all(processes.map((p) => p.stop()));
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await db?.drop();
  });

  it('every read returns the live clients with correct counts at every level, through the other gateway replica', async () => {
    expect((await call('GET', admin(''), { headers: h() })).body).toEqual({
      id: applicationId,
      channelCount: 2,
      userCount: 3,
      deviceCount: 3,
      clientCount: 3,
      connectionCount: 3,
    });
    const channels = (
      await call<Array<{ id: string; clientCount: number; connectionCount: number }>>('GET', admin('/channels'), {
        headers: h(),
      })
    ).body;
    expect(
      channels.map((c) => [c.id, c.clientCount, c.connectionCount] as const).sort((a, b) => a[0].localeCompare(b[0])),
    ).toEqual([
      ['lobby', 2, 2],
      ['stage', 1, 1],
    ]);
    expect((await call('GET', admin('/channels/lobby'), { headers: h() })).body).toEqual({
      id: 'lobby',
      userCount: 2,
      deviceCount: 2,
      clientCount: 2,
      connectionCount: 2,
    });
    expect((await call<unknown[]>('GET', admin('/users'), { headers: h() })).body).toHaveLength(3);
    expect((await call('GET', admin('/users/alice'), { headers: h() })).body).toEqual(
      expect.objectContaining({ id: 'alice', deviceCount: 1, clientCount: 1, channelCount: 1 }),
    );
    expect((await call('GET', admin('/channels/lobby/users/bob'), { headers: h() })).body).toEqual(
      expect.objectContaining({ id: 'bob', deviceCount: 1, clientCount: 1, connectionCount: 1 }),
    );
    expect((await call('GET', admin('/users/bob/devices/bob-phone'), { headers: h() })).body).toEqual(
      expect.objectContaining({ id: 'bob-phone', userId: 'bob', clientCount: 1, channelCount: 1 }),
    );
    expect((await call('GET', admin('/channels/lobby/users/bob/devices/bob-phone'), { headers: h() })).body).toEqual(
      expect.objectContaining({ id: 'bob-phone', clientCount: 1, connectionCount: 1 }),
    );
    expect((await call('GET', admin('/users/bob/devices/bob-phone/clients/bob-1'), { headers: h() })).body).toEqual(
      expect.objectContaining({
        id: 'bob-1',
        userId: 'bob',
        deviceId: 'bob-phone',
        roles: ['participant'],
        channelCount: 1,
      }),
    );
    expect(
      (await call('GET', admin('/channels/lobby/users/bob/devices/bob-phone/clients/bob-1'), { headers: h() })).body,
    ).toEqual(expect.objectContaining({ id: 'bob-1', connectionCount: 1 }));
    const connection = (
      await call<Record<string, unknown>>(
        'GET',
        admin('/channels/lobby/users/bob/devices/bob-phone/clients/bob-1/connections/cn-bob-1'),
        { headers: h() },
      )
    ).body;
    expect(connection).toEqual(
      expect.objectContaining({
        id: 'cn-bob-1',
        applicationId,
        channelId: 'lobby',
        userId: 'bob',
        clientId: 'bob-1',
        type: 'peer',
        state: 'connected',
        hasAudio: true,
        hasVideo: true,
      }),
    );
    expect((await call<unknown[]>('GET', admin('/channels/lobby/connections'), { headers: h() })).body).toHaveLength(2);
    expect(
      (
        await call<Array<{ id: string }>>('GET', admin('/users/carol/devices/carol-tablet/clients/carol-1/channels'), {
          headers: h(),
        })
      ).body.map((c) => c.id),
    ).toEqual(['stage']);
  });

  it('delivers a message to exactly the targeted clients, with the sender identity', async () => {
    const before = clients.map((c) => c.pushes.length);
    const answer = await call('POST', admin('/channels/lobby/users/bob/message'), {
      headers: h(),
      body: { message: 'hello bob', userId: 'ops', userAlias: 'Operator' },
    });
    expect(answer.status).toBe(204);
    const [alice, bob, carol] = clients as [Client, Client, Client];
    await waitFor(() => bob.pushes.length > before[1]!);
    const push = bob.pushes.at(-1)!;
    expect(push).toEqual(
      expect.objectContaining({
        type: 'message',
        channelId: 'lobby',
        message: expect.objectContaining({ message: 'hello bob' }),
      }),
    );
    expect(push.from).toEqual(expect.objectContaining({ userId: 'ops', userAlias: 'Operator' }));
    // A management action reaches the channel: both lobby clients, not carol.
    expect(
      (
        await call('POST', `${management.url}/ApplicationConfigs/${configId}/SendChannelMessage`, {
          headers: h(),
          body: { channelId: 'lobby', message: { message: 'to the lobby' } },
        })
      ).status,
    ).toBe(204);
    await waitFor(() =>
      alice.pushes.some((p) => p.type === 'message' && (p.message as { message: string }).message === 'to the lobby'),
    );
    await waitFor(() =>
      bob.pushes.some((p) => p.type === 'message' && (p.message as { message: string }).message === 'to the lobby'),
    );
    expect(alice.pushes.some((p) => (p.message as { message?: string } | undefined)?.message === 'hello bob')).toBe(
      false,
    );
    expect(carol.pushes.filter((p) => p.type === 'message')).toEqual([]);
  });

  it('mutes a channel except an excluded user and pushes the settings to the muted clients', async () => {
    const [alice, bob] = clients as [Client, Client];
    expect(
      (
        await call('PATCH', admin('/channels/lobby'), {
          headers: h(),
          body: { audioMuted: true, excludedUserIds: ['alice'] },
        })
      ).status,
    ).toBe(204);
    await waitFor(() =>
      bob.pushes.some((p) => p.type === 'settings' && (p.settings as { audioMuted: boolean }).audioMuted === true),
    );
    const bobConnection = (
      await call<Record<string, unknown>>(
        'GET',
        admin('/channels/lobby/users/bob/devices/bob-phone/clients/bob-1/connections/cn-bob-1'),
        { headers: h() },
      )
    ).body;
    const aliceConnection = (
      await call<Record<string, unknown>>(
        'GET',
        admin('/channels/lobby/users/alice/devices/alice-laptop/clients/alice-1/connections/cn-alice-1'),
        { headers: h() },
      )
    ).body;
    expect(bobConnection.localAudioMuted).toBe(true);
    expect(aliceConnection.localAudioMuted).toBe(false);
    expect(
      alice.pushes.some((p) => p.type === 'settings' && (p.settings as { audioMuted: boolean }).audioMuted === true),
    ).toBe(false);
  });

  it('kicks a user out of a channel: their connection closes, the others stay', async () => {
    const [, bob] = clients as [Client, Client];
    expect((await call('DELETE', admin('/channels/lobby/users/bob'), { headers: h() })).status).toBe(204);
    await waitFor(() => bob.pushes.some((p) => p.type === 'kicked' && p.channelId === 'lobby'));
    expect((await call('GET', admin('/channels/lobby'), { headers: h() })).body).toEqual({
      id: 'lobby',
      userCount: 1,
      deviceCount: 1,
      clientCount: 1,
      connectionCount: 1,
    });
    expectProblem(await call('GET', admin('/channels/lobby/users/bob'), { headers: h() }), 404, 'NotFound');
    expect((await call('GET', admin(''), { headers: h() })).body).toEqual(
      expect.objectContaining({ clientCount: 3, connectionCount: 2 }),
    );
  });

  it('refuses tampered, expired and foreign tokens with an error frame and a close', async () => {
    const good = await token('mallory', 'm-dev', 'm-1', ['lobby']);
    const [header, payload] = good.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Record<string, unknown>;
    const forge = (changes: Record<string, unknown>, secret = 'not-the-secret') => {
      const body = Buffer.from(JSON.stringify({ ...claims, ...changes })).toString('base64');
      return `${header}.${body}.${createHmac('sha256', secret).update(`${header}.${body}`).digest('base64')}`;
    };
    const expired = await call<{ sharedSecret: string }>('GET', `${management.url}/ApplicationConfigs/${configId}`, {
      headers: h(),
    });
    const cases = [
      `${header}.${Buffer.from(JSON.stringify({ ...claims, userId: 'admin' })).toString('base64')}.${good.split('.')[2]}`,
      forge(
        { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 3700 },
        expired.body.sharedSecret,
      ),
      forge({ applicationId: 'someone-elses-app' }, expired.body.sharedSecret),
    ];
    for (const bad of cases) {
      const sync = await SyncClient.connect(`${gateway1.url!.replace('http', 'ws')}/sync`);
      await expect(sync.request('register', { token: bad })).rejects.toThrow();
      const closed = await sync.closed;
      expect(closed.code).toBeGreaterThanOrEqual(4001);
      expect(closed.code).toBeLessThanOrEqual(4003);
    }
  });
});
