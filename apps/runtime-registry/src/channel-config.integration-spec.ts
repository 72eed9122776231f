/**
 * The channel config's `recordingEnabled` against a real management-api (its own process, with
 * PostgreSQL): a channel governed by a recording config records its connections (connection info,
 * join/open answers and connection events), a level setting writing `recording` wins, a config
 * change applies to the channels activated after it, and a management-api that does not answer
 * neither blocks joins nor is remembered (the next activation asks again).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
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
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  startRegistry,
  type TestClient,
} from './testing/harness.testing.js';

const run = promisify(execFile);

describe('channel config recordingEnabled (with management-api)', () => {
  const servers = testServers();
  const ns = testNamespace('registry_chcfg');
  const applicationId = `app-${ns}`;
  let db: TestDatabase;
  let managementEnv: Record<string, string>;
  let management: SpawnedService | undefined;
  let key: string;
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let gw: FakeGateway;
  let events: EventReader;
  let organizationId: string;
  let appConfigId: string;
  const client: TestClient = { applicationId, userId: 'u1', deviceId: 'd1', clientId: 'c1' };
  const other: TestClient = { applicationId, userId: 'u2', deviceId: 'd2', clientId: 'c2' };

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${management!.url}${path}`, {
      method,
      headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as any;
  };
  const startManagement = async () => {
    management = await spawnService('management-api', { ...managementEnv, HTTP_PORT: String(await freePort()) });
  };
  /** Joins, opens a connection and takes it to connected; returns the answers and the connection info. */
  const connect = async (c: TestClient, channelId: string, connectionId: string) => {
    const joined = await rt.edge({ kind: 'client.join', client: c, channelId, claim: claim(channelId) });
    const opened = await rt.edge({
      kind: 'connection.open',
      client: c,
      channelId,
      connectionId,
      type: 'peer',
      tag: null,
      streams: { audio: { direction: 'sendrecv' } },
    });
    for (const state of ['initializing', 'connecting', 'connected'] as const)
      await rt.edge({ kind: 'connection.state', client: c, channelId, connectionId, state });
    const info = await rt.query(OPERATOR, 'connection.get', { ...c, channelId, connectionId });
    return { joined, opened, info };
  };
  const recordingOfEvents = async (connectionId: string) =>
    (await events.all())
      .filter((e) => e.event.event.type.startsWith('connection.') && e.event.event.connection?.id === connectionId)
      .map((e) => e.event.event.connection!.recording);

  beforeAll(async () => {
    db = await createTestDatabase('registry_chcfg');
    managementEnv = { NATS_URL: servers.natsUrl, NATS_NAMESPACE: ns, DATABASE_URL: db.url, LOG_LEVEL: 'warn' };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...managementEnv },
    });
    key = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    await startManagement();
    const created = await api('POST', '/ApplicationConfigs', { applicationId });
    appConfigId = created.id;
    organizationId = created.organizationId;
    await api('POST', '/ChannelConfigs', {
      applicationConfigId: appConfigId,
      channelIdPattern: 'studio',
      recordingEnabled: true,
    });
    await api('POST', '/ChannelConfigs', {
      applicationConfigId: appConfigId,
      channelIdPattern: 'later',
      recordingEnabled: true,
    });
    await api('POST', '/ChannelConfigs', {
      applicationConfigId: appConfigId,
      channelIdPattern: '*',
      recordingEnabled: false,
    });
    registry = await startRegistry(registryEnv(ns, { CHANNEL_CONFIG_TIMEOUT_MS: '500' }));
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    gw = await new FakeGateway('gw-1', nc, ns).start();
    events = await EventReader.open(nc, ns);
    for (const c of [client, other]) await rt.edge(registerReport(c, organizationId, 'gw-1'));
  }, 60000);

  afterAll(async () => {
    gw?.stop();
    await nc?.close();
    await registry?.app.close();
    await management?.stop();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await db?.drop();
  });

  it('records the connections of a channel whose config says recordingEnabled, and only those', async () => {
    const studio = await connect(client, 'studio', 'cn-studio');
    expect(studio.joined.settings.recording).toBe(true);
    expect(studio.opened.settings.recording).toBe(true);
    expect(studio.info.recording).toBe(true);
    expect(await recordingOfEvents('cn-studio')).toEqual([true, true, true]);

    const lobby = await connect(client, 'lobby', 'cn-lobby');
    expect([lobby.joined.settings.recording, lobby.opened.settings.recording, lobby.info.recording]).toEqual([
      false,
      false,
      false,
    ]);
    expect(await recordingOfEvents('cn-lobby')).toEqual([false, false, false]);
  });

  it('lets a level setting that writes recording win over the channel config', async () => {
    gw.clear();
    await rt.command(OPERATOR, {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'channel.client',
        applicationId,
        channelId: 'studio',
        userId: client.userId,
        deviceId: client.deviceId,
        clientId: client.clientId,
        patch: { recording: false },
      },
    });
    expect(
      (await rt.query(OPERATOR, 'connection.get', { ...client, channelId: 'studio', connectionId: 'cn-studio' }))
        .recording,
    ).toBe(false);
    await waitFor(
      () =>
        gw
          .of('settings')
          .some(
            (r) =>
              r.push.type === 'settings' && r.push.connectionId === 'cn-studio' && r.push.settings.recording === false,
          ),
      { description: 'the settings push' },
    );
    expect((await recordingOfEvents('cn-studio')).at(-1)).toBe(false);
    // A setting that leaves `recording` alone keeps the channel config's default.
    const second = await connect(other, 'studio', 'cn-studio-2');
    expect(second.info.recording).toBe(true);
    await rt.command(OPERATOR, {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel', applicationId, channelId: 'studio', patch: { audioMuted: true } },
    });
    expect(
      (await rt.query(OPERATOR, 'connection.get', { ...other, channelId: 'studio', connectionId: 'cn-studio-2' }))
        .recording,
    ).toBe(true);
    await rt.edge({ kind: 'client.leave', client: other, channelId: 'studio' });
    await rt.edge({ kind: 'client.leave', client, channelId: 'studio' });
  });

  it('applies a changed config to the channels activated after the change', async () => {
    const [config] = (await api('GET', `/ChannelConfigs?$filter=channelIdPattern eq 'studio'`)).value;
    await api('PATCH', `/ChannelConfigs/${config.id}`, { recordingEnabled: false });
    // applications.changed reaches the registry asynchronously: activate again until it shows.
    let n = 0;
    await waitFor(
      async () => {
        const id = `cn-after-${n++}`;
        const { info } = await connect(client, 'studio', id);
        await rt.edge({ kind: 'client.leave', client, channelId: 'studio' });
        return info.recording === false;
      },
      { timeoutMs: 10000, description: 'the changed channel config' },
    );
  });

  it('does not block joins while management-api is down, and asks again at the next activation', async () => {
    await management!.stop();
    management = undefined;
    const down = await connect(client, 'later', 'cn-later-1');
    expect(down.info.recording).toBe(false);
    await rt.edge({ kind: 'client.leave', client, channelId: 'later' });
    await startManagement();
    const again = await connect(client, 'later', 'cn-later-2');
    expect(again.info.recording).toBe(true);
    expect(await recordingOfEvents('cn-later-2')).toEqual([true, true, true]);
  }, 60000);
});
