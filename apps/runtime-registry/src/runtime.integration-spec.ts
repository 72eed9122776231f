/**
 * runtime-registry against the real NATS and Redis, driven over NATS exactly as the gateway and
 * management-api drive it: edge reports build live state, queries read it, commands change it;
 * two fake gateway replicas collect the pushes.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import {
  InterfaceAValidators,
  type DatastorePage,
  type InterfaceASchemaName,
  type KickTarget,
  type MessageTarget,
} from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers } from '@switchboard/testing';
import { LiveStore } from './store/live-store.js';
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  scopeOf,
  startRegistry,
  WireError,
  type TestClient,
} from './testing/harness.testing.js';
import type { Redis } from 'ioredis';
import { REDIS } from '@switchboard/service-kit';

const ORG = 'org-a';
const TENANT = scopeOf(ORG);

/**
 * The world of one application:
 *   u1: d1 (c1, c2), d2 (c3)     u2: d3 (c4)     u3: d4 (c5)
 *   gw-1 holds c1, c3, c5; gw-2 holds c2, c4
 *   ch1: c1, c2, c3, c4, one connection each     ch2: c1 (no connection), c5 (one connection)
 */
function world(applicationId: string) {
  const c = (userId: string, deviceId: string, clientId: string): TestClient => ({
    applicationId,
    userId,
    deviceId,
    clientId,
  });
  const clients = {
    c1: c('u1', 'd1', 'c1'),
    c2: c('u1', 'd1', 'c2'),
    c3: c('u1', 'd2', 'c3'),
    c4: c('u2', 'd3', 'c4'),
    c5: c('u3', 'd4', 'c5'),
  };
  const gateway: Record<keyof typeof clients, string> = { c1: 'gw-1', c2: 'gw-2', c3: 'gw-1', c4: 'gw-2', c5: 'gw-1' };
  const ch1 = ['c1', 'c2', 'c3', 'c4'] as const;
  const ch2 = ['c1', 'c5'] as const;
  return { applicationId, clients, gateway, ch1, ch2 };
}
type World = ReturnType<typeof world>;
type ClientName = keyof World['clients'];

describe('runtime-registry live model', () => {
  const ns = testNamespace('registry');
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let gw1: FakeGateway;
  let gw2: FakeGateway;
  let events: EventReader;

  async function build(applicationId: string, organizationId = ORG): Promise<World> {
    const w = world(applicationId);
    for (const [name, c] of Object.entries(w.clients) as Array<[ClientName, TestClient]>) {
      await rt.edge(
        registerReport(c, organizationId, w.gateway[name], { tag: `tag-${name}`, roles: [`role-${name}`] }),
      );
    }
    for (const name of w.ch1) {
      await rt.edge({ kind: 'client.join', client: w.clients[name], channelId: 'ch1', claim: claim('ch1') });
      await rt.edge({
        kind: 'connection.open',
        client: w.clients[name],
        channelId: 'ch1',
        connectionId: `cn-${name}`,
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv' } },
      });
    }
    for (const name of w.ch2)
      await rt.edge({ kind: 'client.join', client: w.clients[name], channelId: 'ch2', claim: claim('ch2') });
    await rt.edge({
      kind: 'connection.open',
      client: w.clients.c5,
      channelId: 'ch2',
      connectionId: 'cn-c5',
      type: 'peer',
      tag: 'screen',
      streams: { video: { direction: 'sendonly' } },
    });
    return w;
  }

  const names = (received: Array<{ clientId: string }>) => received.map((r) => r.clientId).sort();

  async function expectWire(promise: Promise<unknown>, code: string) {
    await expect(promise).rejects.toBeInstanceOf(WireError);
    await expect(promise).rejects.toMatchObject({ code });
  }

  function valid(schema: InterfaceASchemaName, value: unknown) {
    expect({ schema, errors: InterfaceAValidators[schema].errors(value) }).toEqual({ schema, errors: [] });
  }

  beforeAll(async () => {
    registry = await startRegistry(registryEnv(ns));
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    gw1 = await new FakeGateway('gw-1', nc, ns).start();
    gw2 = await new FakeGateway('gw-2', nc, ns).start();
    events = await EventReader.open(nc, ns);
  });

  afterAll(async () => {
    gw1?.stop();
    gw2?.stop();
    await events?.manager.streams.delete(events.stream).catch(() => undefined);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  beforeEach(() => {
    gw1.clear();
    gw2.clear();
  });

  describe('reads', () => {
    let w: World;
    const a = 'app-reads';
    beforeAll(async () => {
      w = await build(a);
    });

    it('lists the application in use and counts it at the application level', async () => {
      expect(await rt.query(OPERATOR, 'applications.list', {})).toContain(a);
      const snapshot = await rt.query(TENANT, 'application.get', { applicationId: a });
      valid('ApplicationSnapshot', snapshot);
      expect(snapshot).toEqual({
        id: a,
        channelCount: 2,
        userCount: 3,
        deviceCount: 4,
        clientCount: 5,
        connectionCount: 5,
      });
    });

    it('counts channels', async () => {
      const channels = await rt.query(TENANT, 'channels.list', { applicationId: a });
      for (const ch of channels) valid('ChannelSnapshot', ch);
      expect(channels).toEqual([
        { id: 'ch1', userCount: 2, deviceCount: 3, clientCount: 4, connectionCount: 4 },
        { id: 'ch2', userCount: 2, deviceCount: 2, clientCount: 2, connectionCount: 1 },
      ]);
      expect(await rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'ch2' })).toEqual(channels[1]);
      expect((await rt.query(TENANT, 'client.channels', { ...w.clients.c1 })).map((c) => c.id)).toEqual(['ch1', 'ch2']);
      expect((await rt.query(TENANT, 'client.channels', { ...w.clients.c4 })).map((c) => c.id)).toEqual(['ch1']);
    });

    it('counts users, in the application and in a channel', async () => {
      const users = await rt.query(TENANT, 'users.list', { applicationId: a });
      for (const u of users) valid('UserInfo', u);
      expect(users).toEqual([
        { id: 'u1', alias: 'alias-u1', deviceCount: 2, clientCount: 3, channelCount: 2 },
        { id: 'u2', alias: 'alias-u2', deviceCount: 1, clientCount: 1, channelCount: 1 },
        { id: 'u3', alias: 'alias-u3', deviceCount: 1, clientCount: 1, channelCount: 1 },
      ]);
      expect(await rt.query(TENANT, 'user.get', { applicationId: a, userId: 'u2' })).toEqual(users[1]);
      const inCh1 = await rt.query(TENANT, 'channel.users', { applicationId: a, channelId: 'ch1' });
      for (const u of inCh1) valid('UserInChannelSnapshot', u);
      expect(inCh1).toEqual([
        { id: 'u1', alias: 'alias-u1', deviceCount: 2, clientCount: 3, connectionCount: 3 },
        { id: 'u2', alias: 'alias-u2', deviceCount: 1, clientCount: 1, connectionCount: 1 },
      ]);
      expect(await rt.query(TENANT, 'channel.user.get', { applicationId: a, channelId: 'ch2', userId: 'u1' })).toEqual({
        id: 'u1',
        alias: 'alias-u1',
        deviceCount: 1,
        clientCount: 1,
        connectionCount: 0,
      });
    });

    it('counts devices, of a user and in a channel', async () => {
      const devices = await rt.query(TENANT, 'user.devices', { applicationId: a, userId: 'u1' });
      for (const d of devices) valid('DeviceInfo', d);
      expect(devices).toEqual([
        { id: 'd1', userId: 'u1', alias: 'dev-d1', clientCount: 2, channelCount: 2 },
        { id: 'd2', userId: 'u1', alias: 'dev-d2', clientCount: 1, channelCount: 1 },
      ]);
      expect(await rt.query(TENANT, 'device.get', { applicationId: a, userId: 'u1', deviceId: 'd2' })).toEqual(
        devices[1],
      );
      const inCh1 = await rt.query(TENANT, 'channel.devices', { applicationId: a, channelId: 'ch1' });
      for (const d of inCh1) valid('DeviceInChannelSnapshot', d);
      expect(inCh1).toEqual([
        { id: 'd1', userId: 'u1', alias: 'dev-d1', clientCount: 2, connectionCount: 2 },
        { id: 'd2', userId: 'u1', alias: 'dev-d2', clientCount: 1, connectionCount: 1 },
        { id: 'd3', userId: 'u2', alias: 'dev-d3', clientCount: 1, connectionCount: 1 },
      ]);
      expect(
        await rt.query(TENANT, 'channel.user.devices', { applicationId: a, channelId: 'ch1', userId: 'u1' }),
      ).toEqual(inCh1.slice(0, 2));
      expect(
        await rt.query(TENANT, 'channel.device.get', {
          applicationId: a,
          channelId: 'ch2',
          userId: 'u1',
          deviceId: 'd1',
        }),
      ).toEqual({ id: 'd1', userId: 'u1', alias: 'dev-d1', clientCount: 1, connectionCount: 0 });
    });

    it('counts clients, of a device and in a channel', async () => {
      const clients = await rt.query(TENANT, 'device.clients', { applicationId: a, userId: 'u1', deviceId: 'd1' });
      for (const c of clients) valid('ClientInfo', c);
      expect(clients).toEqual([
        {
          id: 'c1',
          tag: 'tag-c1',
          userId: 'u1',
          userAlias: 'alias-u1',
          deviceId: 'd1',
          deviceAlias: 'dev-d1',
          roles: ['role-c1'],
          channelCount: 2,
        },
        {
          id: 'c2',
          tag: 'tag-c2',
          userId: 'u1',
          userAlias: 'alias-u1',
          deviceId: 'd1',
          deviceAlias: 'dev-d1',
          roles: ['role-c2'],
          channelCount: 1,
        },
      ]);
      expect(await rt.query(TENANT, 'client.get', { ...w.clients.c2 })).toEqual(clients[1]);
      const inCh1 = await rt.query(TENANT, 'channel.clients', { applicationId: a, channelId: 'ch1' });
      for (const c of inCh1) valid('ClientInChannelSnapshot', c);
      expect(inCh1.map((c) => [c.userId, c.deviceId, c.id, c.connectionCount])).toEqual([
        ['u1', 'd1', 'c1', 1],
        ['u1', 'd1', 'c2', 1],
        ['u1', 'd2', 'c3', 1],
        ['u2', 'd3', 'c4', 1],
      ]);
      expect(
        await rt.query(TENANT, 'channel.device.clients', {
          applicationId: a,
          channelId: 'ch1',
          userId: 'u1',
          deviceId: 'd1',
        }),
      ).toEqual(inCh1.slice(0, 2));
      expect(await rt.query(TENANT, 'channel.client.get', { ...w.clients.c1, channelId: 'ch2' })).toEqual({
        id: 'c1',
        userId: 'u1',
        deviceId: 'd1',
        roles: ['role-c1'],
        connectionCount: 0,
      });
    });

    it('reads connections with every field of connection info', async () => {
      const all = await rt.query(TENANT, 'channel.connections', { applicationId: a, channelId: 'ch1' });
      expect(all.map((c) => c.id)).toEqual(['cn-c1', 'cn-c2', 'cn-c3', 'cn-c4']);
      for (const c of all) valid('ConnectionInfo', c);
      const one = await rt.query(TENANT, 'connection.get', {
        ...w.clients.c5,
        channelId: 'ch2',
        connectionId: 'cn-c5',
      });
      valid('ConnectionInfo', one);
      expect(one).toEqual(
        expect.objectContaining({
          id: 'cn-c5',
          applicationId: a,
          channelId: 'ch2',
          userId: 'u3',
          userAlias: 'alias-u3',
          clientTag: 'tag-c5',
          clientRoles: ['role-c5'],
          state: 'new',
          type: 'peer',
          tag: 'screen',
          hasVideo: true,
          hasAudio: false,
          videoDirection: 'sendonly',
        }),
      );
      expect(await rt.query(TENANT, 'channel.client.connections', { ...w.clients.c3, channelId: 'ch1' })).toEqual([
        all[2],
      ]);
      expect(await rt.query(TENANT, 'channel.client.connections', { ...w.clients.c1, channelId: 'ch2' })).toEqual([]);
    });

    it('follows a connection through its states', async () => {
      const ref = { client: w.clients.c4, channelId: 'ch1', connectionId: 'cn-c4' };
      for (const state of ['initializing', 'connecting', 'connected'] as const)
        await rt.edge({ kind: 'connection.state', ...ref, state });
      await rt.edge({ kind: 'connection.update', ...ref, localAudioMuted: true, tag: 'camera' });
      const info = await rt.query(TENANT, 'connection.get', {
        ...w.clients.c4,
        channelId: 'ch1',
        connectionId: 'cn-c4',
      });
      expect(info).toEqual(expect.objectContaining({ state: 'connected', localAudioMuted: true, tag: 'camera' }));
      // A repeated state changes nothing; a jump backwards is refused.
      await rt.edge({ kind: 'connection.state', ...ref, state: 'connected' });
      await expectWire(rt.edge({ kind: 'connection.state', ...ref, state: 'connecting' }), 'Conflict');
    });

    it('answers NotFound for unknown entities at every level', async () => {
      await expectWire(rt.query(TENANT, 'application.get', { applicationId: 'no-such-app' }), 'NotFound');
      await expectWire(rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'nope' }), 'NotFound');
      await expectWire(rt.query(TENANT, 'channel.users', { applicationId: a, channelId: 'nope' }), 'NotFound');
      await expectWire(rt.query(TENANT, 'user.get', { applicationId: a, userId: 'nope' }), 'NotFound');
      await expectWire(rt.query(TENANT, 'user.devices', { applicationId: a, userId: 'nope' }), 'NotFound');
      await expectWire(
        rt.query(TENANT, 'channel.user.get', { applicationId: a, channelId: 'ch2', userId: 'u2' }),
        'NotFound',
      );
      await expectWire(rt.query(TENANT, 'device.get', { applicationId: a, userId: 'u1', deviceId: 'd9' }), 'NotFound');
      await expectWire(rt.query(TENANT, 'client.get', { ...w.clients.c1, clientId: 'c9' }), 'NotFound');
      await expectWire(rt.query(TENANT, 'channel.client.get', { ...w.clients.c4, channelId: 'ch2' }), 'NotFound');
      await expectWire(
        rt.query(TENANT, 'connection.get', { ...w.clients.c1, channelId: 'ch1', connectionId: 'nope' }),
        'NotFound',
      );
    });

    it('keeps organizations apart and operator queries to operators', async () => {
      const other = scopeOf('org-b');
      for (const kind of ['application.get', 'channels.list', 'users.list', 'application.environment'] as const) {
        await expectWire(rt.query(other, kind, { applicationId: a }), 'NotFound');
      }
      await expectWire(rt.query(other, 'channel.connections', { applicationId: a, channelId: 'ch1' }), 'NotFound');
      await expectWire(
        rt.command(other, {
          kind: 'message',
          origin: 'api',
          target: { level: 'application', applicationId: a },
          message: { message: 'x' },
        }),
        'NotFound',
      );
      await expectWire(
        rt.command(other, {
          kind: 'kick',
          origin: 'api',
          target: { level: 'channel', applicationId: a, channelId: 'ch1' },
        }),
        'NotFound',
      );
      expect(gw1.received.length + gw2.received.length).toBe(0);
      // The application list holds each organization's own applications; operators see them all.
      expect(await rt.query(TENANT, 'applications.list', {})).toContain(a);
      expect(await rt.query(other, 'applications.list', {})).not.toContain(a);
      expect(await rt.query(OPERATOR, 'applications.list', {})).toContain(a);
      for (const kind of [
        'mediaservers.list',
        'mediaservers.stats',
        'connectors.list',
        'diagnostics.datastore',
      ] as const) {
        await expectWire(rt.query(TENANT, kind, {}), 'Forbidden');
      }
      await expectWire(rt.query(TENANT, 'mediaserver.get', { mediaServerId: 'x' }), 'Forbidden');
      await expectWire(
        rt.command(TENANT, { kind: 'mediaserver.update', mediaServerId: 'x', patch: { active: false } }),
        'Forbidden',
      );
      // Operators see every organization's applications.
      expect((await rt.query(OPERATOR, 'application.get', { applicationId: a })).clientCount).toBe(5);
    });

    it('refuses malformed requests naming the field', async () => {
      await expect(
        rt.raw('runtime-registry.v1.query', { scope: TENANT, query: { kind: 'channel.get', applicationId: a } }),
      ).rejects.toMatchObject({
        code: 'ValidationFailed',
      });
      await expect(rt.raw('runtime-registry.v1.edge', { report: { kind: 'client.join' } })).rejects.toMatchObject({
        code: 'ValidationFailed',
      });
    });

    it('dumps the datastore page by page, without secrets', async () => {
      const keys = new Set<string>();
      let cursor: string | undefined = '0';
      let pages = 0;
      let text = '';
      while (cursor !== undefined) {
        const page: DatastorePage = await rt.query(OPERATOR, 'diagnostics.datastore', { cursor, count: 10 });
        pages++;
        for (const e of page.entries) {
          keys.add(e.key);
          expect(['string', 'hash', 'set', 'zset', 'list']).toContain(e.type);
        }
        text += JSON.stringify(page);
        cursor = page.next ?? undefined;
      }
      expect(pages).toBeGreaterThan(1);
      expect([...keys].every((k) => k.startsWith(`${ns}:rt:`))).toBe(true);
      expect(keys).toContain(`${ns}:rt:app:{${a}}:clients`);
      expect(keys).toContain(`${ns}:rt:app:{${a}}:ch:ch1:conns`);
      expect(text).not.toMatch(/secret|password|sharedSecret/i);
    });
  });

  describe('messages', () => {
    let w: World;
    const a = 'app-messages';
    beforeAll(async () => {
      w = await build(a);
    });

    const cases: Array<[string, MessageTarget, ClientName[]]> = [
      ['application', { level: 'application', applicationId: a }, ['c1', 'c2', 'c3', 'c4', 'c5']],
      ['channel', { level: 'channel', applicationId: a, channelId: 'ch1' }, ['c1', 'c2', 'c3', 'c4']],
      ['user', { level: 'user', applicationId: a, userId: 'u1' }, ['c1', 'c2', 'c3']],
      ['user in channel', { level: 'channel.user', applicationId: a, channelId: 'ch2', userId: 'u1' }, ['c1']],
      ['device', { level: 'device', applicationId: a, userId: 'u1', deviceId: 'd1' }, ['c1', 'c2']],
      [
        'device in channel',
        { level: 'channel.device', applicationId: a, channelId: 'ch1', userId: 'u1', deviceId: 'd1' },
        ['c1', 'c2'],
      ],
      ['client', { level: 'client', applicationId: a, userId: 'u1', deviceId: 'd2', clientId: 'c3' }, ['c3']],
      [
        'client in channel',
        { level: 'channel.client', applicationId: a, channelId: 'ch2', userId: 'u3', deviceId: 'd4', clientId: 'c5' },
        ['c5'],
      ],
    ];

    it.each(cases)(
      'to a %s reaches exactly the intended clients, through the gateway holding each',
      async (_, target, expected) => {
        const message = {
          message: `hello ${target.level}`,
          userId: 'ops',
          userAlias: 'Operations',
          clientTag: 'admin',
          clientRoles: ['moderator'],
        };
        await rt.command(TENANT, { kind: 'message', origin: 'api', target, message });
        const received = [...gw1.received, ...gw2.received];
        expect(names(received)).toEqual([...expected].sort());
        for (const r of received) {
          expect(r.gatewayId).toBe(w.gateway[r.clientId as ClientName]);
          expect(r.applicationId).toBe(a);
          expect(r.push).toEqual({
            type: 'message',
            channelId: 'channelId' in target ? target.channelId : null,
            message,
            from: {
              userId: 'ops',
              userAlias: 'Operations',
              deviceId: null,
              deviceAlias: null,
              clientId: null,
              clientTag: 'admin',
              clientRoles: ['moderator'],
            },
          });
        }
      },
    );

    it('to someone not there answers NotFound and reaches nobody', async () => {
      const absent = [
        { level: 'channel.user', applicationId: a, channelId: 'ch2', userId: 'u2' },
        { level: 'channel', applicationId: a, channelId: 'ch9' },
        { level: 'user', applicationId: a, userId: 'u9' },
      ] as const;
      for (const target of absent) {
        await expectWire(
          rt.command(TENANT, { kind: 'message', origin: 'api', target, message: { message: 'x' } }),
          'NotFound',
        );
      }
      expect(gw1.received.length + gw2.received.length).toBe(0);
    });

    it('from a client reaches the channel (or the named member) but not the sender, with the sender identity', async () => {
      const answer = await rt.edge({
        kind: 'client.message',
        client: w.clients.c2,
        channelId: 'ch1',
        message: { message: 'hi all' },
      });
      expect(answer).toEqual({ delivered: 3 });
      expect(names([...gw1.received, ...gw2.received])).toEqual(['c1', 'c3', 'c4']);
      expect(gw1.received[0]!.push).toEqual({
        type: 'message',
        channelId: 'ch1',
        message: { message: 'hi all' },
        from: {
          userId: 'u1',
          userAlias: 'alias-u1',
          deviceId: 'd1',
          deviceAlias: 'dev-d1',
          clientId: 'c2',
          clientTag: 'tag-c2',
          clientRoles: ['role-c2'],
        },
      });
      gw1.clear();
      gw2.clear();
      expect(
        await rt.edge({
          kind: 'client.message',
          client: w.clients.c2,
          channelId: 'ch1',
          message: { message: 'psst' },
          to: { userId: 'u2' },
        }),
      ).toEqual({ delivered: 1 });
      expect(names(gw2.received)).toEqual(['c4']);
      expect(gw1.received).toEqual([]);
    });

    it('from a client outside channels reaches the named user, device or client; without one it is for the server only', async () => {
      expect(
        await rt.edge({
          kind: 'client.message',
          client: w.clients.c5,
          channelId: null,
          message: { message: 'u1?' },
          to: { userId: 'u1' },
        }),
      ).toEqual({ delivered: 3 });
      expect(names([...gw1.received, ...gw2.received])).toEqual(['c1', 'c2', 'c3']);
      expect(
        [...gw1.received, ...gw2.received].every(
          (r) => r.push.type === 'message' && r.push.channelId === null && r.push.from.clientId === 'c5',
        ),
      ).toBe(true);
      gw1.clear();
      gw2.clear();
      expect(
        await rt.edge({
          kind: 'client.message',
          client: w.clients.c5,
          channelId: null,
          message: { message: 'd1?' },
          to: { userId: 'u1', deviceId: 'd1' },
        }),
      ).toEqual({ delivered: 2 });
      expect(
        await rt.edge({
          kind: 'client.message',
          client: w.clients.c5,
          channelId: null,
          message: { message: 'c3?' },
          to: { userId: 'u1', deviceId: 'd2', clientId: 'c3' },
        }),
      ).toEqual({ delivered: 1 });
      expect(names([...gw1.received, ...gw2.received])).toEqual(['c1', 'c2', 'c3']);
      gw1.clear();
      gw2.clear();
      expect(
        await rt.edge({
          kind: 'client.message',
          client: w.clients.c5,
          channelId: null,
          message: { message: 'server?' },
        }),
      ).toEqual({ delivered: 0 });
      expect([...gw1.received, ...gw2.received]).toEqual([]);
    });

    it('from a client whose claim forbids sending is refused', async () => {
      await rt.edge({
        kind: 'client.join',
        client: w.clients.c4,
        channelId: 'ch1',
        claim: claim('ch1', { disableSendMessage: true }),
      });
      await expectWire(
        rt.edge({ kind: 'client.message', client: w.clients.c4, channelId: 'ch1', message: { message: 'no' } }),
        'Forbidden',
      );
      await expectWire(
        rt.edge({ kind: 'client.message', client: w.clients.c4, channelId: 'ch2', message: { message: 'no' } }),
        'NotFound',
      );
      expect(gw1.received.length + gw2.received.length).toBe(0);
    });
  });

  describe('kicks', () => {
    // level, target, removed members (channel, client), closed connections
    const kicks: Array<[string, (a: string) => KickTarget, Array<[string, ClientName]>, string[]]> = [
      [
        'channel',
        (a) => ({ level: 'channel', applicationId: a, channelId: 'ch1' }),
        [
          ['ch1', 'c1'],
          ['ch1', 'c2'],
          ['ch1', 'c3'],
          ['ch1', 'c4'],
        ],
        ['cn-c1', 'cn-c2', 'cn-c3', 'cn-c4'],
      ],
      [
        'user in channel',
        (a) => ({ level: 'channel.user', applicationId: a, channelId: 'ch1', userId: 'u1' }),
        [
          ['ch1', 'c1'],
          ['ch1', 'c2'],
          ['ch1', 'c3'],
        ],
        ['cn-c1', 'cn-c2', 'cn-c3'],
      ],
      [
        'device in channel',
        (a) => ({ level: 'channel.device', applicationId: a, channelId: 'ch1', userId: 'u1', deviceId: 'd1' }),
        [
          ['ch1', 'c1'],
          ['ch1', 'c2'],
        ],
        ['cn-c1', 'cn-c2'],
      ],
      [
        'client in channel',
        (a) => ({
          level: 'channel.client',
          applicationId: a,
          channelId: 'ch2',
          userId: 'u3',
          deviceId: 'd4',
          clientId: 'c5',
        }),
        [['ch2', 'c5']],
        ['cn-c5'],
      ],
      [
        'connection',
        (a) => ({
          level: 'connection',
          applicationId: a,
          channelId: 'ch1',
          userId: 'u1',
          deviceId: 'd2',
          clientId: 'c3',
          connectionId: 'cn-c3',
        }),
        [],
        ['cn-c3'],
      ],
    ];

    it.each(kicks)(
      'at %s level removes exactly the intended members and closes their connections',
      async (level, targetOf, removed, closedConns) => {
        const a = `app-kick-${level.replace(/ /g, '-')}`;
        const w = await build(a);
        const before = await membership(a);
        const conns = async () =>
          [
            ...(await rt.query(TENANT, 'channel.connections', { applicationId: a, channelId: 'ch1' }).catch(() => [])),
            ...(await rt.query(TENANT, 'channel.connections', { applicationId: a, channelId: 'ch2' }).catch(() => [])),
          ]
            .map((c) => c.id)
            .sort();
        const connsBefore = await conns();
        gw1.clear();
        gw2.clear();

        await rt.command(TENANT, { kind: 'kick', origin: 'api', target: targetOf(a) });

        const after = await membership(a);
        const gone = before.filter((m) => !after.includes(m));
        expect(gone.sort()).toEqual(removed.map(([ch, c]) => `${ch}/${c}`).sort());
        const awaitedConns = await conns();
        expect(connsBefore.filter((c) => !awaitedConns.includes(c)).sort()).toEqual([...closedConns].sort());
        // Every kicked client, and only those, is told (through its gateway).
        const kicked = [...gw1.received, ...gw2.received].filter((r) => r.push.type === 'kicked');
        if (level === 'connection') {
          expect(kicked.map((k) => [k.clientId, k.push])).toEqual([
            ['c3', { type: 'kicked', channelId: 'ch1', connectionId: 'cn-c3' }],
          ]);
        } else {
          expect(names(kicked)).toEqual(removed.map(([, c]) => c).sort());
          for (const k of kicked) expect(k.gatewayId).toBe(w.gateway[k.clientId as ClientName]);
        }
        // Kicked clients stay registered; counts follow.
        expect((await rt.query(TENANT, 'application.get', { applicationId: a })).clientCount).toBe(5);
        // The closure is visible in the events, forced, from the API.
        const closed = (await events.all()).filter(
          (e) => e.event.applicationId === a && e.event.event.type === 'connection.closed',
        );
        expect(closed.map((e) => e.event.event.connection!.id).sort()).toEqual([...closedConns].sort());
        expect(closed.every((e) => e.event.event.forced && e.event.event.origin === 'api')).toBe(true);
      },
    );

    it('of someone not in the channel answers NotFound and changes nothing', async () => {
      const a = 'app-kick-missing';
      await build(a);
      const before = await membership(a);
      await expectWire(
        rt.command(TENANT, {
          kind: 'kick',
          origin: 'api',
          target: { level: 'channel.user', applicationId: a, channelId: 'ch2', userId: 'u2' },
        }),
        'NotFound',
      );
      await expectWire(
        rt.command(TENANT, {
          kind: 'kick',
          origin: 'api',
          target: {
            level: 'connection',
            applicationId: a,
            channelId: 'ch2',
            userId: 'u1',
            deviceId: 'd1',
            clientId: 'c1',
            connectionId: 'x',
          },
        }),
        'NotFound',
      );
      expect(await membership(a)).toEqual(before);
    });

    /** `channel/client` of every membership of the application. */
    async function membership(a: string): Promise<string[]> {
      const out: string[] = [];
      for (const ch of await rt.query(TENANT, 'channels.list', { applicationId: a })) {
        for (const c of await rt.query(TENANT, 'channel.clients', { applicationId: a, channelId: ch.id }))
          out.push(`${ch.id}/${c.id}`);
      }
      return out.sort();
    }
  });

  describe('updates', () => {
    let w: World;
    const a = 'app-updates';
    const info = (name: ClientName, channelId = 'ch1') =>
      rt.query(TENANT, 'connection.get', { ...w.clients[name], channelId, connectionId: `cn-${name}` });
    beforeAll(async () => {
      w = await build(a);
    });

    it('a mute at channel level with one excluded user mutes everyone else and pushes the settings to them', async () => {
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'channel',
          applicationId: a,
          channelId: 'ch1',
          patch: { audioMuted: true, excludedUserIds: ['u2'] },
        },
      });
      const settings = [...gw1.of('settings'), ...gw2.of('settings')];
      expect(names(settings)).toEqual(['c1', 'c2', 'c3']);
      for (const s of settings) {
        expect(s.push).toEqual(
          expect.objectContaining({
            type: 'settings',
            channelId: 'ch1',
            connectionId: `cn-${s.clientId}`,
            settings: expect.objectContaining({ audioMuted: true, videoMuted: false }),
          }),
        );
        expect(s.gatewayId).toBe(w.gateway[s.clientId as ClientName]);
      }
      for (const name of ['c1', 'c2', 'c3'] as const)
        expect(await info(name)).toEqual(expect.objectContaining({ localAudioMuted: true, localVideoMuted: false }));
      expect((await info('c4')).localAudioMuted).toBe(false);
      expect((await info('c5', 'ch2')).localAudioMuted).toBe(false);
      // A connection opened later in the channel is muted too.
      await rt.edge({
        kind: 'connection.open',
        client: w.clients.c2,
        channelId: 'ch1',
        connectionId: 'cn-c2-late',
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
      expect(
        (await rt.query(TENANT, 'connection.get', { ...w.clients.c2, channelId: 'ch1', connectionId: 'cn-c2-late' }))
          .localAudioMuted,
      ).toBe(true);
    });

    it('the latest command wins across levels and only changed connections are told', async () => {
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'channel.device',
          applicationId: a,
          channelId: 'ch1',
          userId: 'u1',
          deviceId: 'd1',
          patch: { audioMuted: false, excludedClientIds: ['c2'] },
        },
      });
      expect(names([...gw1.of('settings'), ...gw2.of('settings')])).toEqual(['c1']);
      expect((await info('c1')).localAudioMuted).toBe(false);
      expect((await info('c2')).localAudioMuted).toBe(true);
      gw1.clear();
      gw2.clear();
      // Setting again what is already in effect tells nobody.
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'channel.user',
          applicationId: a,
          channelId: 'ch1',
          userId: 'u2',
          patch: { audioMuted: false },
        },
      });
      expect([...gw1.received, ...gw2.received]).toEqual([]);
    });

    it('recording, unmute-disabled and video at client, connection and user levels', async () => {
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'connection',
          applicationId: a,
          channelId: 'ch1',
          ...pick(w.clients.c4),
          connectionId: 'cn-c4',
          patch: { recording: true, recordingTag: 'interview' },
        },
      });
      expect(await info('c4')).toEqual(expect.objectContaining({ recording: true, recordingTag: 'interview' }));
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'channel.client',
          applicationId: a,
          channelId: 'ch1',
          ...pick(w.clients.c3),
          patch: { videoMuted: true, videoUnmuteDisabled: true },
        },
      });
      expect(await info('c3')).toEqual(
        expect.objectContaining({ localVideoMuted: true, localVideoUnmuteDisabled: true }),
      );
      expect(gw1.of('settings').map((s) => [s.clientId, s.push])).toContainEqual([
        'c3',
        expect.objectContaining({ settings: expect.objectContaining({ videoMuted: true, videoUnmuteDisabled: true }) }),
      ]);
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'channel.user',
          applicationId: a,
          channelId: 'ch1',
          userId: 'u1',
          patch: { audioUnmuteDisabled: true, excludedDeviceIds: ['d2'] },
        },
      });
      expect((await info('c1')).localAudioUnmuteDisabled).toBe(true);
      expect((await info('c3')).localAudioUnmuteDisabled).toBe(false);
    });

    it('a join answers the settings in effect for the client', async () => {
      const answer = await rt.edge({
        kind: 'client.join',
        client: w.clients.c5,
        channelId: 'ch1',
        claim: claim('ch1'),
      });
      expect(answer.channel).toEqual({ id: 'ch1', userCount: 3, deviceCount: 4, clientCount: 5, connectionCount: 5 });
      expect(answer.settings).toEqual(expect.objectContaining({ audioMuted: true }));
    });

    it('a client patch changes aliases, tag and roles and is pushed to the client', async () => {
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'client',
          ...w.clients.c2,
          patch: { userAlias: 'Ann', tag: 'vip', roles: ['host', 'speaker'] },
        },
      });
      expect(gw2.received.map((r) => [r.clientId, r.push])).toEqual([
        [
          'c2',
          { type: 'client.updated', userAlias: 'Ann', deviceAlias: 'dev-d1', tag: 'vip', roles: ['host', 'speaker'] },
        ],
      ]);
      expect(await rt.query(TENANT, 'client.get', { ...w.clients.c2 })).toEqual(
        expect.objectContaining({ userAlias: 'Ann', tag: 'vip', roles: ['host', 'speaker'] }),
      );
      expect((await info('c2')).clientRoles).toEqual(['host', 'speaker']);
      expect((await rt.query(TENANT, 'user.get', { applicationId: a, userId: 'u1' })).alias).toBe('Ann');
    });

    it('a claim patch replaces the claim and is pushed as claim.updated', async () => {
      const newClaim = { id: 'ch1', disableSendMessage: true, canKick: true };
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'channel.client',
          applicationId: a,
          channelId: 'ch1',
          ...pick(w.clients.c1),
          patch: { claim: newClaim },
        },
      });
      expect(gw1.received.map((r) => [r.clientId, r.push])).toEqual([
        ['c1', { type: 'claim.updated', channelId: 'ch1', claim: newClaim }],
      ]);
      await expectWire(
        rt.edge({ kind: 'client.message', client: w.clients.c1, channelId: 'ch1', message: { message: 'x' } }),
        'Forbidden',
      );
    });

    it('updates of what is not there answer NotFound', async () => {
      await expectWire(
        rt.command(TENANT, {
          kind: 'update',
          origin: 'api',
          target: { level: 'channel', applicationId: a, channelId: 'nope', patch: { audioMuted: true } },
        }),
        'NotFound',
      );
      await expectWire(
        rt.command(TENANT, {
          kind: 'update',
          origin: 'api',
          target: {
            level: 'channel.user',
            applicationId: a,
            channelId: 'ch2',
            userId: 'u2',
            patch: { audioMuted: true },
          },
        }),
        'NotFound',
      );
      await expectWire(
        rt.command(TENANT, {
          kind: 'update',
          origin: 'api',
          target: { level: 'client', ...w.clients.c1, clientId: 'c9', patch: { tag: 'x' } },
        }),
        'NotFound',
      );
    });
  });

  describe('lifecycle', () => {
    it('an application is in use from its first registration to its last unregistration; channels while they have members', async () => {
      const a = 'app-lifecycle';
      const c1 = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c1' };
      const c2 = { ...c1, clientId: 'c2' };
      expect(await rt.query(OPERATOR, 'applications.list', {})).not.toContain(a);
      await rt.edge(registerReport(c1, ORG, 'gw-1'));
      await rt.edge(registerReport(c1, ORG, 'gw-1')); // a repeated registration changes nothing
      await rt.edge(registerReport(c2, ORG, 'gw-2'));
      expect(await rt.query(OPERATOR, 'applications.list', {})).toContain(a);
      expect((await rt.query(TENANT, 'application.get', { applicationId: a })).clientCount).toBe(2);
      await rt.edge({ kind: 'client.join', client: c1, channelId: 'room', claim: claim('room') });
      await rt.edge({ kind: 'client.join', client: c1, channelId: 'room', claim: claim('room') }); // idempotent
      await rt.edge({ kind: 'client.join', client: c2, channelId: 'room', claim: claim('room') });
      expect(await rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'room' })).toEqual({
        id: 'room',
        userCount: 1,
        deviceCount: 1,
        clientCount: 2,
        connectionCount: 0,
      });
      await rt.edge({ kind: 'client.leave', client: c1, channelId: 'room' });
      await rt.edge({ kind: 'client.leave', client: c1, channelId: 'room' }); // idempotent
      expect((await rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'room' })).clientCount).toBe(1);
      await rt.edge({ kind: 'client.unregister', client: c2, reason: 'dropped', gatewayId: 'gw-2' });
      await expectWire(rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'room' }), 'NotFound');
      await rt.edge({ kind: 'client.unregister', client: c1, reason: 'left', gatewayId: 'gw-1' });
      expect(await rt.query(OPERATOR, 'applications.list', {})).not.toContain(a);
      await expectWire(rt.query(OPERATOR, 'application.get', { applicationId: a }), 'NotFound');
      // Nothing of the application's live state is left behind.
      const page = await rt.query(OPERATOR, 'diagnostics.datastore', { count: 1000 });
      let all = page.entries.map((e) => e.key);
      for (let next: string | null = page.next; next;) {
        const more: { entries: Array<{ key: string }>; next: string | null } = await rt.query(
          OPERATOR,
          'diagnostics.datastore',
          { cursor: next, count: 1000 },
        );
        all = all.concat(more.entries.map((e) => e.key));
        next = more.next;
      }
      expect(all.filter((k) => k.includes(`{${a}}`))).toEqual([`${ns}:rt:app:{${a}}`]);
    });

    it('a client registering again through another gateway ends its session on the old one', async () => {
      const c = { applicationId: 'app-move', userId: 'u', deviceId: 'd', clientId: 'c' };
      const store = registry.app.get(LiveStore);
      const redis = registry.app.get<Redis>(REDIS);
      const holds = async (gatewayId: string) =>
        (await redis.smembers(store.keys.gatewayClients(gatewayId))).includes(store.gatewayMember(c.applicationId, c));
      await rt.edge(registerReport(c, ORG, 'gw-1'));
      expect([await holds('gw-1'), await holds('gw-2')]).toEqual([true, false]);
      await rt.edge(registerReport(c, ORG, 'gw-2'));
      expect(gw1.received.map((r) => r.push.type)).toEqual(['unregistered']);
      // The gateways' client sets (what the sweeper unregisters when a gateway is gone) follow the move.
      expect([await holds('gw-1'), await holds('gw-2')]).toEqual([false, true]);
      await rt.command(TENANT, {
        kind: 'message',
        origin: 'api',
        target: { level: 'client', ...c },
        message: { message: 'where?' },
      });
      expect(gw2.of('message')).toHaveLength(1);
      expect(gw1.of('message')).toHaveLength(0);
    });

    it('a registration in another session replaces the previous one: its channels and connections end, with their events; the new one starts with none', async () => {
      const a = 'app-replace';
      const c = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' };
      const other = { applicationId: a, userId: 'u2', deviceId: 'd2', clientId: 'c2' };
      const conn = { client: c, channelId: 'room', connectionId: 'cn' };
      await rt.edge({ ...registerReport(c, ORG, 'gw-1'), sessionId: 's-1' });
      await rt.edge({ ...registerReport(other, ORG, 'gw-1'), sessionId: 's-o' });
      for (const ch of ['room', 'solo'])
        await rt.edge({ kind: 'client.join', client: c, channelId: ch, claim: claim(ch) });
      await rt.edge({ kind: 'client.join', client: other, channelId: 'room', claim: claim('room') });
      await rt.edge({
        kind: 'connection.open',
        ...conn,
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
      await rt.edge({ kind: 'connection.state', ...conn, state: 'initializing' });
      // The same session registering again (a retry) changes nothing.
      await rt.edge({ ...registerReport(c, ORG, 'gw-1'), sessionId: 's-1' });
      expect((await rt.query(TENANT, 'client.get', c)).channelCount).toBe(2);
      const last = Math.max(0, ...(await events.all()).map((e) => e.seq));

      // Its gateway is gone: the client registers through another one, in a new session.
      await rt.edge({ ...registerReport(c, ORG, 'gw-2'), sessionId: 's-2' });
      expect((await rt.query(TENANT, 'client.get', c)).channelCount).toBe(0);
      expect(await rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'room' })).toEqual({
        id: 'room',
        userCount: 1,
        deviceCount: 1,
        clientCount: 1,
        connectionCount: 0,
      });
      await expectWire(rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'solo' }), 'NotFound');
      const fresh = (await events.all())
        .filter((e) => e.seq > last && e.event.applicationId === a)
        .map((e) => e.event.event);
      const byText = (x: unknown, y: unknown) => String(x).localeCompare(String(y));
      expect(fresh.map((e) => [e.type, e.channel?.id ?? null, e.origin]).sort(byText)).toEqual(
        [
          ['channel.client.left', 'room', 'server'],
          ['channel.client.left', 'solo', 'server'],
          ['channel.deactivated', 'solo', 'server'],
          ['client.registered', null, 'client'],
          ['client.unregistered', null, 'server'],
          ['connection.closed', 'room', 'server'],
        ].sort(byText),
      );
      // The old registration ends before the new one starts.
      expect(fresh.map((e) => e.type).slice(-2)).toEqual(['client.unregistered', 'client.registered']);
      // The client joins again, as its new session does at the edge: a join, with its event.
      expect(
        (await rt.edge({ kind: 'client.join', client: c, channelId: 'room', claim: claim('room') })).channel
          .clientCount,
      ).toBe(2);
      const joined = (await events.all()).filter(
        (e) => e.seq > last && e.event.applicationId === a && e.event.event.type === 'channel.client.joined',
      );
      expect(joined).toHaveLength(1);
    });

    it("the read of a gateway's sessions: per client its registration, channels with claims, connections with their settings and states, and the settings version", async () => {
      const a = 'app-sessions';
      const c = { applicationId: a, userId: 'u/1', deviceId: 'd:1', clientId: 'c 1' };
      const d = { applicationId: a, userId: 'u2', deviceId: 'd2', clientId: 'c2' };
      const other = { applicationId: 'app-sessions-2', userId: 'u', deviceId: 'd', clientId: 'c' };
      const never = { applicationId: a, userId: 'nobody', deviceId: 'd', clientId: 'c' };
      const read = (clients: unknown[]) =>
        rt.raw('runtime-registry.v1.edge', { report: { kind: 'gateway.sessions', clients } });
      await rt.edge({ ...registerReport(c, ORG, 'gw-1', { tag: 't' }), sessionId: 's-c' });
      await rt.edge({ ...registerReport(d, ORG, 'gw-1'), sessionId: 's-d' });
      await rt.edge({ ...registerReport(other, ORG, 'gw-1'), sessionId: 's-o' });
      await rt.edge({
        kind: 'client.join',
        client: c,
        channelId: 'room/1',
        claim: claim('room/1', { disableSendMessage: true }),
      });
      await rt.edge({
        kind: 'connection.open',
        client: c,
        channelId: 'room/1',
        connectionId: 'cn:1',
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: { level: 'channel', applicationId: a, channelId: 'room/1', patch: { audioUnmuteDisabled: true } },
      });
      await rt.command(TENANT, {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'connection',
          applicationId: a,
          channelId: 'room/1',
          userId: 'u/1',
          deviceId: 'd:1',
          clientId: 'c 1',
          connectionId: 'cn:1',
          patch: { recordingTag: 'x' },
        },
      });
      const answer = (await read([c, never, other, d])) as { clients: Array<Record<string, unknown> | null> };
      const settings = {
        recording: false,
        recordingTag: 'x',
        audioMuted: false,
        videoMuted: false,
        audioUnmuteDisabled: true,
        videoUnmuteDisabled: false,
      };
      expect(answer.clients).toEqual([
        {
          gatewayId: 'gw-1',
          sessionId: 's-c',
          userAlias: 'alias-u/1',
          deviceAlias: 'dev-d:1',
          tag: 't',
          roles: ['participant'],
          channels: [
            {
              channelId: 'room/1',
              claim: { id: 'room/1', disableSendMessage: true },
              connections: [{ connectionId: 'cn:1', settings, state: 'new' }],
            },
          ],
          settingsVersion: expect.any(Number),
        },
        null,
        expect.objectContaining({ sessionId: 's-o', channels: [], settingsVersion: 0 }),
        expect.objectContaining({ sessionId: 's-d', channels: [] }),
      ]);
      // The version of the last settings push of the application (two writes: 2).
      expect(answer.clients[0]!.settingsVersion).toBe(2);
      expect(answer.clients[3]!.settingsVersion).toBe(2);
      await expectWire(read(Array.from({ length: 501 }, () => c)), 'ValidationFailed');
      await expectWire(read([{ applicationId: a, userId: 'u' }]), 'ValidationFailed');
    });

    it('a leave, state change or close naming a session applies only to that registration of the client', async () => {
      const a = 'app-session-checked';
      const c = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' };
      const conn = { client: c, channelId: 'room', connectionId: 'cn' };
      const connections = async () =>
        (await rt.query(TENANT, 'channel.client.connections', { channelId: 'room', ...c })).map((x) => x.id);
      await rt.edge({ ...registerReport(c, ORG, 'gw-1'), sessionId: 's-1' });
      await rt.edge({ kind: 'client.join', client: c, channelId: 'room', claim: claim('room') });
      await rt.edge({
        kind: 'connection.open',
        ...conn,
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
      // Reports of an ended registration (another session): answered ok, nothing changes.
      expect(await rt.edge({ kind: 'connection.close', ...conn, sessionId: 's-0' })).toEqual({ ok: true });
      await expectWire(rt.edge({ kind: 'connection.state', ...conn, state: 'failing', sessionId: 's-0' }), 'NotFound');
      expect(await rt.edge({ kind: 'client.leave', client: c, channelId: 'room', sessionId: 's-0' })).toEqual({
        ok: true,
      });
      expect(await connections()).toEqual(['cn']);
      expect((await rt.query(TENANT, 'client.get', c)).channelCount).toBe(1);
      // The registration's own.
      await rt.edge({ kind: 'connection.state', ...conn, state: 'initializing', sessionId: 's-1' });
      expect((await rt.query(TENANT, 'connection.get', { ...c, channelId: 'room', connectionId: 'cn' })).state).toBe(
        'initializing',
      );
      await rt.edge({ kind: 'connection.close', ...conn, sessionId: 's-1' });
      expect(await connections()).toEqual([]);
      await rt.edge({ kind: 'client.leave', client: c, channelId: 'room', sessionId: 's-1' });
      expect((await rt.query(TENANT, 'client.get', c)).channelCount).toBe(0);
    });

    it("the read of a gateway's clients pages through every client registered through it", async () => {
      const gateway = 'gw-listed';
      const mine = ['app-listed-1', 'app-listed-2'].flatMap((applicationId) =>
        ['c1', 'c2', 'c3'].map((clientId) => ({ applicationId, userId: 'u/1', deviceId: 'd', clientId })),
      );
      const elsewhere = { applicationId: 'app-listed-1', userId: 'u', deviceId: 'd', clientId: 'other' };
      for (const c of mine) await rt.edge(registerReport(c, ORG, gateway));
      await rt.edge(registerReport(elsewhere, ORG, 'gw-1'));
      await rt.edge({ kind: 'client.unregister', client: mine[0]!, reason: 'left', gatewayId: gateway });
      const listed = new Map<string, unknown>();
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = (await rt.raw('runtime-registry.v1.edge', {
          report: { kind: 'gateway.clients', gatewayId: gateway, count: 1, ...(cursor ? { cursor } : {}) },
        })) as { clients: TestClient[]; next: string | null };
        for (const c of page.clients) listed.set(JSON.stringify(c), c);
        cursor = page.next ?? undefined;
        pages++;
      } while (cursor && pages < 100);
      expect(cursor).toBeUndefined();
      expect([...listed.values()].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual(
        mine.slice(1).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
      );
      await expectWire(
        rt.raw('runtime-registry.v1.edge', { report: { kind: 'gateway.clients', gatewayId: gateway, count: 0 } }),
        'ValidationFailed',
      );
      await expectWire(
        rt.raw('runtime-registry.v1.edge', { report: { kind: 'gateway.clients', gatewayId: gateway, cursor: 'x' } }),
        'ValidationFailed',
      );
    });

    it('ignores a stale unregister: one from the old gateway, or from an ended session, leaves the live registration', async () => {
      const c = { applicationId: 'app-stale', userId: 'u', deviceId: 'd', clientId: 'c' };
      const clientGet = () => rt.query(TENANT, 'client.get', c);
      await rt.edge({ ...registerReport(c, ORG, 'gw-1'), sessionId: 's-1' });
      await rt.edge({ ...registerReport(c, ORG, 'gw-2'), sessionId: 's-2' });
      await rt.edge({ kind: 'client.join', client: c, channelId: 'room', claim: claim('room') });
      // The grace-period unregister of the socket the client left on gw-1 arrives late.
      expect(
        await rt.edge({ kind: 'client.unregister', client: c, reason: 'dropped', gatewayId: 'gw-1', sessionId: 's-1' }),
      ).toEqual({ ok: true });
      expect((await clientGet()).channelCount).toBe(1);
      // gw-2's earlier session of the same client ended: its unregister is stale too.
      await rt.edge({ kind: 'client.unregister', client: c, reason: 'dropped', gatewayId: 'gw-2', sessionId: 's-1' });
      expect((await clientGet()).channelCount).toBe(1);
      await rt.edge({ kind: 'client.unregister', client: c, reason: 'left', gatewayId: 'gw-2', sessionId: 's-2' });
      await expectWire(clientGet(), 'NotFound');
    });
  });

  describe('edge batches', () => {
    const batch = (sequences: unknown[][]) =>
      rt.raw('runtime-registry.v1.edge', { report: { kind: 'batch', sequences } }) as Promise<{
        sequences: unknown[][];
      }>;

    it('runs each sequence in order, answers per report, and ends a sequence at its first failure', async () => {
      const a = 'app-batch';
      const c1 = { applicationId: a, userId: 'u1', deviceId: 'd1', clientId: 'c1' };
      const c2 = { applicationId: a, userId: 'u2', deviceId: 'd2', clientId: 'c2' };
      const conn = { client: c1, channelId: 'room', connectionId: 'cn1' };
      const answer = await batch([
        [
          registerReport(c1, ORG, 'gw-1'),
          { kind: 'client.join', client: c1, channelId: 'room', claim: claim('room') },
          { kind: 'connection.open', ...conn, type: 'peer', tag: null, streams: { audio: { direction: 'sendrecv' } } },
          { kind: 'connection.state', ...conn, state: 'initializing' },
        ],
        // c2 never registered: its join fails alone, the report after it is not applied.
        [{ kind: 'client.join', client: c2, channelId: 'room', claim: claim('room') }, registerReport(c2, ORG, 'gw-1')],
        // An invalid report fails alone too (ValidationFailed naming the field), ending its sequence.
        [
          { kind: 'connection.state', ...conn, state: 'dancing' },
          { kind: 'connection.state', ...conn, state: 'connecting' },
        ],
      ]);
      expect(answer.sequences).toEqual([
        [
          { ok: { ok: true } },
          { ok: expect.objectContaining({ channel: expect.objectContaining({ id: 'room', clientCount: 1 }) }) },
          { ok: expect.objectContaining({ mediaServerId: null }) },
          { ok: { ok: true } },
        ],
        [{ error: expect.objectContaining({ code: 'NotFound' }) }, { skipped: true }],
        [
          {
            error: expect.objectContaining({
              code: 'ValidationFailed',
              details: [expect.objectContaining({ field: 'report.sequences.2.0.state' })],
            }),
          },
          { skipped: true },
        ],
      ]);
      expect(
        (
          await rt.query(TENANT, 'connection.get', {
            applicationId: a,
            channelId: 'room',
            ...pick(c1),
            connectionId: 'cn1',
          })
        ).state,
      ).toBe('initializing');
      expect((await rt.query(TENANT, 'application.get', { applicationId: a })).clientCount).toBe(1);
      // One script for the whole first sequence, its events in the order of its reports.
      const types = (await events.all())
        .filter((e) => e.event.applicationId === a && e.event.event.client?.id === 'c1')
        .map((e) => e.event.event.type);
      expect(types).toEqual([
        'client.registered',
        'channel.activated',
        'channel.client.joined',
        'connection.initializing',
      ]);
    });

    it('applies nothing of a pipelined sequence after the report the registry refuses', async () => {
      const a = 'app-batch-refusal';
      const c3 = { applicationId: a, userId: 'u3', deviceId: 'd3', clientId: 'c3' };
      const c4 = { applicationId: a, userId: 'u4', deviceId: 'd4', clientId: 'c4' };
      const conn3 = { client: c3, channelId: 'room', connectionId: 'cn3' };
      const conn4 = { client: c4, channelId: 'room', connectionId: 'cn4' };
      const open = (conn: typeof conn3) => ({
        kind: 'connection.open',
        ...conn,
        type: 'peer',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
      const answer = await batch([
        // The claim forbids peer connections: the open is refused, the state after it skipped.
        [
          registerReport(c3, ORG, 'gw-1'),
          { kind: 'client.join', client: c3, channelId: 'room', claim: claim('room', { disablePeer: true }) },
          open(conn3),
          { kind: 'connection.state', ...conn3, state: 'initializing' },
        ],
        // new -> connected is refused (Conflict): the connection stays new, the state after it is not applied.
        [
          registerReport(c4, ORG, 'gw-1'),
          { kind: 'client.join', client: c4, channelId: 'room', claim: claim('room') },
          open(conn4),
          { kind: 'connection.state', ...conn4, state: 'connected' },
          { kind: 'connection.state', ...conn4, state: 'initializing' },
        ],
      ]);
      expect(answer.sequences).toEqual([
        [
          { ok: { ok: true } },
          { ok: expect.anything() },
          { error: expect.objectContaining({ code: 'Forbidden' }) },
          { skipped: true },
        ],
        [
          { ok: { ok: true } },
          { ok: expect.anything() },
          { ok: expect.objectContaining({ mediaServerId: null }) },
          { error: expect.objectContaining({ code: 'Conflict' }) },
          { skipped: true },
        ],
      ]);
      await expectWire(
        rt.query(TENANT, 'connection.get', { applicationId: a, channelId: 'room', ...pick(c3), connectionId: 'cn3' }),
        'NotFound',
      );
      expect(
        (
          await rt.query(TENANT, 'connection.get', {
            applicationId: a,
            channelId: 'room',
            ...pick(c4),
            connectionId: 'cn4',
          })
        ).state,
      ).toBe('new');
      expect(await rt.query(TENANT, 'channel.get', { applicationId: a, channelId: 'room' })).toEqual(
        expect.objectContaining({ clientCount: 2, connectionCount: 1 }),
      );
      const types = (await events.all()).filter((e) => e.event.applicationId === a).map((e) => e.event.event.type);
      expect(types.filter((t) => t.startsWith('connection.'))).toEqual([]);
      expect(types.filter((t) => t === 'client.registered')).toHaveLength(2);
    });
  });

  describe('video frame size', () => {
    it('fills width, height and frame rate from the described stream, then from the latest stats', async () => {
      const a = 'app-video';
      const c = { applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' };
      const conn = { client: c, channelId: 'room', connectionId: 'v1' };
      await rt.edge(registerReport(c, ORG, 'gw-1'));
      await rt.edge({ kind: 'client.join', client: c, channelId: 'room', claim: claim('room') });
      await rt.edge({
        kind: 'connection.open',
        ...conn,
        type: 'peer',
        tag: null,
        streams: { video: { direction: 'sendrecv', formats: ['VP8/90000'], width: 640, height: 360, frameRate: 30 } },
      });
      const get = () =>
        rt.query(TENANT, 'connection.get', { applicationId: a, channelId: 'room', ...pick(c), connectionId: 'v1' });
      expect((await get()).videoStream).toEqual(expect.objectContaining({ width: 640, height: 360, frameRate: 30 }));
      await rt.edge({
        kind: 'connection.stats',
        ...conn,
        stats: { frameWidth: 1280, frameHeight: 720, framesPerSecond: 24 },
      });
      const info = await get();
      expect(info.videoStream).toEqual(expect.objectContaining({ width: 1280, height: 720, frameRate: 24 }));
      expect(info.videoStreams).toEqual([info.videoStream]);
      expect(InterfaceAValidators.ConnectionInfo.errors(info)).toEqual([]);
    });
  });
});

function pick(c: TestClient) {
  return { userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
}
