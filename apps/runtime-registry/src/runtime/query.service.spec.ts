import { DomainError, type CallerScope, type ConnectionInfo, type DatastorePage } from '@switchboard/contracts';
import type { LevelHash, LevelSnapshot } from '../model/settings.js';
import type {
  ChannelCounts,
  ChannelDeviceCounts,
  ChannelMember,
  ClientPath,
  ConnectionPath,
  RegisteredClient,
  StoredConnectionView,
  UserCounts,
} from '../store/live-reads.js';
import type { ApplicationOwnership } from './tenancy.js';
import { QueryService, type ApplicationReads, type QueryReads, type ServerReads } from './query.service.js';

/**
 * QueryService against fakes of its store seam (no Redis): tenancy, operator queries, sorting and
 * filtering of the lists, and the effective settings in connection infos.
 */

const OWN = 'org-own';
const OTHER = 'org-other';
const APP = 'app-own';
const FOREIGN_APP = 'app-foreign';

const member: CallerScope = { organizationId: OWN, operator: false, principal: 'key-1' };
const operator: CallerScope = { organizationId: null, operator: true, principal: 'operator' };

/** A setting written at a level with the application's sequence number `seq` (as the scripts store it). */
function written(seq: number, values: Record<string, boolean>, lists: Record<string, string[]> = {}): LevelHash {
  const out: LevelHash = {};
  for (const [name, on] of Object.entries(values))
    Object.assign(out, { [name]: on ? '1' : '0', [`${name}@`]: `${seq}` });
  for (const [name, ids] of Object.entries(lists)) out[name] = JSON.stringify(ids);
  return out;
}

const noLevels: LevelSnapshot = { ch: {}, u: {}, d: {}, c: {}, n: {} };

/** The live model of the tests, as the store's reads would answer it. */
class FakeReads implements QueryReads {
  channels: ChannelCounts[] = [];
  users: UserCounts[] = [];
  channelDevices: ChannelDeviceCounts[] = [];
  registered: RegisteredClient[] = [];
  members: ChannelMember[] = [];
  stored: StoredConnectionView[] = [];

  async channelActive(_a: string, channelId: string) {
    return this.channels.some((c) => c.channelId === channelId && c.clientCount > 0);
  }
  async clientRegistered(c: ClientPath) {
    return this.registered.some((r) => r.clientId === c.clientId);
  }
  async channelMember(c: ClientPath & { channelId: string }) {
    return this.members.some((m) => m.clientId === c.clientId);
  }
  async activeChannelIds() {
    return this.channels.map((c) => c.channelId);
  }
  async clientChannelIds() {
    return [];
  }
  async channelCounts(_a: string, channelIds: string[]) {
    return channelIds.map(
      (id) =>
        this.channels.find((c) => c.channelId === id) ?? {
          channelId: id,
          userCount: 0,
          deviceCount: 0,
          clientCount: 0,
          connectionCount: 0,
        },
    );
  }
  async userCounts(_a: string, only?: string) {
    return this.users.filter((u) => only === undefined || u.userId === only);
  }
  async channelUserCounts() {
    return [];
  }
  async deviceCounts() {
    return [];
  }
  async channelDeviceCounts() {
    return this.channelDevices;
  }
  async deviceClientIds() {
    return this.registered.map((r) => r.clientId);
  }
  async registeredClients(_a: string, _u: string, _d: string, clientIds: string[]) {
    return clientIds.map(
      (id) =>
        this.registered.find((r) => r.clientId === id) ?? {
          userId: 'u',
          deviceId: 'd',
          clientId: id,
          registration: {},
          channelCount: 0,
        },
    );
  }
  async channelClients() {
    return this.members.map(({ userId, deviceId, clientId }) => ({ userId, deviceId, clientId }));
  }
  async channelMembers(_a: string, _ch: string, members: ClientPath[]) {
    return this.members.filter((m) => members.some((x) => x.clientId === m.clientId));
  }
  async channelConnections() {
    return this.stored.map(({ userId, deviceId, clientId, connectionId }) => ({
      userId,
      deviceId,
      clientId,
      connectionId,
    }));
  }
  async clientConnectionIds() {
    return this.stored.map((s) => s.connectionId);
  }
  async connections(_a: string, _ch: string, paths: ConnectionPath[]) {
    return paths.map(
      (p) =>
        this.stored.find((s) => s.connectionId === p.connectionId && s.clientId === p.clientId) ?? {
          ...p,
          connection: {},
          registration: {},
          levels: noLevels,
        },
    );
  }
}

class FakeApplications implements ApplicationReads {
  owners = new Map<string, ApplicationOwnership>([
    [APP, { organizationId: OWN, inUse: true }],
    [FOREIGN_APP, { organizationId: OTHER, inUse: true }],
    ['app-idle', { organizationId: OWN, inUse: false }],
  ]);
  async appsIndex() {
    return new Map(
      [...this.owners].map(([id, o]) => [id, { gen: 1, inUse: o.inUse, organizationId: o.organizationId ?? '' }]),
    );
  }
  async appSnapshot(a: string) {
    return { ...(await this.appOwner(a)), counts: [2, 3, 4, 5, 6] };
  }
  async appOwner(a: string) {
    return this.owners.get(a) ?? { organizationId: null, inUse: false };
  }
}

const servers: ServerReads = {
  mediaServers: async () => [],
  statistics: async () => [],
  connectors: async () => [],
  environment: async () => ({ gateway: [], mediaserver: [], connector: [], recording: [] }),
};

function setup() {
  const reads = new FakeReads();
  const pages: Array<[string, number]> = [];
  const diagnostics = {
    page: async (cursor: string, count: number): Promise<DatastorePage> => {
      pages.push([cursor, count]);
      return { entries: [], next: null };
    },
  };
  const urls = {
    externalAdminUrl: 'https://admin',
    externalSyncUrl: 'wss://sync',
    externalSipAuthority: 'sip.example',
  };
  const service = new QueryService(reads, new FakeApplications(), servers, diagnostics, urls);
  return { reads, pages, service };
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'answered';
}

function connection(clientId: string, connectionId: string, levels: LevelSnapshot): StoredConnectionView {
  return {
    userId: 'alice',
    deviceId: 'phone',
    clientId,
    connectionId,
    connection: { state: 'connected', type: 'sfu', streams: JSON.stringify({ audio: {}, video: {} }) },
    registration: { roles: '["speaker"]', protocol: 'sync', gatewayId: 'gw-1' },
    levels,
  };
}

describe('QueryService tenancy', () => {
  it("answers another organization's application exactly like a missing one", async () => {
    const { service } = setup();
    const foreign = await failure(service.handle(member, { kind: 'channels.list', applicationId: FOREIGN_APP }));
    const missing = await failure(service.handle(member, { kind: 'channels.list', applicationId: 'app-none' }));
    expect(foreign).toBe(`NotFound: No application '${FOREIGN_APP}' is in use.`);
    expect(missing).toBe(`NotFound: No application 'app-none' is in use.`);
    expect(await failure(service.handle(member, { kind: 'application.get', applicationId: FOREIGN_APP }))).toBe(
      foreign,
    );
  });

  it('lets an operator read any application, and an unused one nobody', async () => {
    const { service } = setup();
    await expect(service.handle(operator, { kind: 'channels.list', applicationId: FOREIGN_APP })).resolves.toEqual([]);
    expect(await failure(service.handle(operator, { kind: 'application.get', applicationId: 'app-idle' }))).toMatch(
      /^NotFound/,
    );
  });

  it('lists only the caller organization applications in use, sorted; an operator sees all', async () => {
    const { service } = setup();
    await expect(service.handle(member, { kind: 'applications.list' })).resolves.toEqual([APP]);
    await expect(service.handle(operator, { kind: 'applications.list' })).resolves.toEqual([FOREIGN_APP, APP]);
  });

  it('refuses operator queries without an operator scope', async () => {
    const { service } = setup();
    for (const query of [{ kind: 'mediaservers.list' }, { kind: 'diagnostics.datastore' }] as const)
      expect(await failure(service.handle(member, query))).toBe(
        'Forbidden: This operation needs an operator credential.',
      );
    await expect(service.handle(operator, { kind: 'mediaservers.list' })).resolves.toEqual([]);
  });

  it('answers the application snapshot with its counts', async () => {
    const { service } = setup();
    await expect(service.handle(member, { kind: 'application.get', applicationId: APP })).resolves.toEqual({
      id: APP,
      channelCount: 2,
      userCount: 3,
      deviceCount: 4,
      clientCount: 5,
      connectionCount: 6,
    });
  });
});

describe('QueryService lists', () => {
  it('sorts channels by id and leaves out channels without members', async () => {
    const { service, reads } = setup();
    const counts = (channelId: string, clientCount: number) => ({
      channelId,
      userCount: clientCount,
      deviceCount: clientCount,
      clientCount,
      connectionCount: 0,
    });
    reads.channels = [counts('zeta', 1), counts('alpha', 2), counts('gone', 0)];
    const list = (await service.handle(member, { kind: 'channels.list', applicationId: APP })) as Array<{
      id: string;
    }>;
    expect(list.map((c) => c.id)).toEqual(['alpha', 'zeta']);
    expect(await failure(service.handle(member, { kind: 'channel.get', applicationId: APP, channelId: 'gone' }))).toBe(
      "NotFound: Channel 'gone' is not active.",
    );
  });

  it('sorts the devices of a channel by user, then device, and narrows them to one user', async () => {
    const { service, reads } = setup();
    const device = (userId: string, deviceId: string) => ({
      userId,
      deviceId,
      alias: null,
      clientCount: 1,
      connectionCount: 0,
    });
    reads.channels = [{ channelId: 'ch', userCount: 2, deviceCount: 3, clientCount: 3, connectionCount: 0 }];
    reads.channelDevices = [device('bob', 'a'), device('alice', 'z'), device('alice', 'b')];
    const all = (await service.handle(member, {
      kind: 'channel.devices',
      applicationId: APP,
      channelId: 'ch',
    })) as Array<{
      userId: string;
      id: string;
    }>;
    expect(all.map((d) => `${d.userId}/${d.id}`)).toEqual(['alice/b', 'alice/z', 'bob/a']);
    const bobs = (await service.handle(member, {
      kind: 'channel.user.devices',
      applicationId: APP,
      channelId: 'ch',
      userId: 'bob',
    })) as Array<{ id: string }>;
    expect(bobs.map((d) => d.id)).toEqual(['a']);
    expect(
      await failure(
        service.handle(member, { kind: 'channel.user.devices', applicationId: APP, channelId: 'ch', userId: 'carol' }),
      ),
    ).toBe("NotFound: User 'carol' is not in channel 'ch'.");
  });

  it('leaves users without registered clients out and finds one user', async () => {
    const { service, reads } = setup();
    const user = (userId: string, clientCount: number) => ({
      userId,
      alias: `${userId}!`,
      deviceCount: 1,
      clientCount,
      channelCount: 0,
    });
    reads.users = [user('bob', 1), user('alice', 2), user('ghost', 0)];
    const list = (await service.handle(member, { kind: 'users.list', applicationId: APP })) as Array<{ id: string }>;
    expect(list.map((u) => u.id)).toEqual(['alice', 'bob']);
    await expect(service.handle(member, { kind: 'user.get', applicationId: APP, userId: 'bob' })).resolves.toEqual({
      id: 'bob',
      alias: 'bob!',
      deviceCount: 1,
      clientCount: 1,
      channelCount: 0,
    });
  });

  it('answers a client from its registration, and NotFound for one not registered', async () => {
    const { service, reads } = setup();
    reads.registered = [
      {
        userId: 'alice',
        deviceId: 'phone',
        clientId: 'c1',
        registration: { tag: 'web', roles: '["host"]', userAlias: 'Alice' },
        channelCount: 2,
      },
    ];
    const ref = { applicationId: APP, userId: 'alice', deviceId: 'phone' };
    await expect(service.handle(member, { kind: 'client.get', ...ref, clientId: 'c1' })).resolves.toEqual({
      id: 'c1',
      tag: 'web',
      userId: 'alice',
      userAlias: 'Alice',
      deviceId: 'phone',
      deviceAlias: null,
      roles: ['host'],
      channelCount: 2,
    });
    expect(await failure(service.handle(member, { kind: 'client.get', ...ref, clientId: 'c9' }))).toBe(
      "NotFound: Client 'c9' is not registered.",
    );
  });

  it('passes the datastore page cursor and count on, with their defaults', async () => {
    const { service, pages } = setup();
    await service.handle(operator, { kind: 'diagnostics.datastore' });
    await service.handle(operator, { kind: 'diagnostics.datastore', cursor: '42', count: 7 });
    expect(pages).toEqual([
      ['0', 100],
      ['42', 7],
    ]);
  });
});

describe('QueryService connection infos', () => {
  const ref = { applicationId: APP, channelId: 'ch', userId: 'alice', deviceId: 'phone', clientId: 'c1' };

  it('resolves the effective settings: the latest write wins whatever its level', async () => {
    const { service, reads } = setup();
    reads.members = [{ userId: 'alice', deviceId: 'phone', clientId: 'c1', roles: null, connectionCount: 2 }];
    reads.stored = [
      // The channel muted at 2, the user unmuted at 1: muted.
      connection('c1', 'cn-a', {
        ...noLevels,
        ch: written(2, { audioMuted: true }),
        u: written(1, { audioMuted: false }),
      }),
      // The user unmuted at 3, after the channel muted at 2: not muted; recording from the channel.
      connection('c1', 'cn-b', {
        ...noLevels,
        ch: written(2, { audioMuted: true, recording: true }),
        u: written(3, { audioMuted: false }),
      }),
    ];
    const infos = (await service.handle(member, {
      kind: 'channel.client.connections',
      ...ref,
    })) as ConnectionInfo[];
    expect(infos.map((i) => [i.id, i.localAudioMuted, i.recording])).toEqual([
      ['cn-a', true, false],
      ['cn-b', false, true],
    ]);
    expect(infos[0]!.clientRoles).toEqual(['speaker']);
  });

  it('lets a level skip the connections it excludes', async () => {
    const { service, reads } = setup();
    reads.stored = [
      connection('c1', 'cn-a', { ...noLevels, ch: written(1, { videoMuted: true }, { excludedClientIds: ['c1'] }) }),
    ];
    const info = (await service.handle(member, {
      kind: 'connection.get',
      ...ref,
      connectionId: 'cn-a',
    })) as ConnectionInfo;
    expect(info.localVideoMuted).toBe(false);
    expect(info.state).toBe('connected');
  });

  it('answers NotFound for a connection that is gone and for a client not in the channel', async () => {
    const { service } = setup();
    expect(await failure(service.handle(member, { kind: 'connection.get', ...ref, connectionId: 'cn-x' }))).toBe(
      "NotFound: No connection 'cn-x' of client 'c1' in channel 'ch'.",
    );
    expect(await failure(service.handle(member, { kind: 'channel.client.connections', ...ref }))).toBe(
      "NotFound: Client 'c1' is not in channel 'ch'.",
    );
  });
});
