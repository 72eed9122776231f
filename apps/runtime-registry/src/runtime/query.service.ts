import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  OPERATOR_QUERIES,
  type ApplicationEnvironment,
  type ApplicationSnapshot,
  type CallerScope,
  type ChannelSnapshot,
  type ClientInChannelSnapshot,
  type ClientInfo,
  type ConnectionInfo,
  type DatastorePage,
  type DeviceInChannelSnapshot,
  type DeviceInfo,
  type RuntimeQuery,
  type UserInChannelSnapshot,
  type UserInfo,
} from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { clientRecord } from '../model/records.js';
import { clientMember, esc, splitMember, unesc } from '../store/keys.js';
import type { ClientIds } from '../store/live-store.js';
import { RuntimeContext } from './context.js';
import { Diagnostics } from './diagnostics.js';

type Hash = Record<string, string>;
type Cmd = [string, ...Array<string | number>];
const n = (v: unknown) => Math.max(0, Number(v ?? 0) || 0);

/**
 * Interface A reads (`runtime-registry.v1.query`). Each read is one or two MULTI snapshots; lists
 * are sorted by id. Tenancy: operators see every application; anyone else only applications of
 * their organization (others answer NotFound; the application list holds only theirs); OPERATOR_QUERIES
 * need an operator (else Forbidden).
 */
@Injectable()
export class QueryService {
  constructor(
    private readonly ctx: RuntimeContext,
    private readonly diagnostics: Diagnostics,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  private get k() {
    return this.ctx.store.keys;
  }

  private read(commands: Cmd[]): Promise<unknown[]> {
    return this.ctx.store.read(commands);
  }

  /**
   * Not async itself: the application snapshot (the read of every admin dashboard poll) goes
   * straight to its one script, without the extra promise of another async layer per request.
   */
  handle(scope: CallerScope, q: RuntimeQuery): Promise<unknown> {
    if (q.kind === 'application.get') return this.application(scope, q.applicationId);
    return this.other(scope, q);
  }

  private async other(scope: CallerScope, q: Exclude<RuntimeQuery, { kind: 'application.get' }>): Promise<unknown> {
    if ((OPERATOR_QUERIES as readonly string[]).includes(q.kind)) this.ctx.requireOperator(scope);
    switch (q.kind) {
      case 'applications.list':
        return this.applications(scope);
      case 'mediaservers.list':
        return this.ctx.servers.mediaServers();
      case 'mediaserver.get':
        return this.one(
          await this.ctx.servers.mediaServers(q.mediaServerId),
          `No media server '${q.mediaServerId}' is registered.`,
        );
      case 'mediaserver.stats':
        return this.one(
          await this.ctx.servers.statistics(q.mediaServerId),
          `No media server '${q.mediaServerId}' is registered.`,
        );
      case 'mediaservers.stats':
        return this.ctx.servers.statistics();
      case 'connectors.list':
        return this.ctx.servers.connectors();
      case 'diagnostics.datastore':
        return this.datastore(q.cursor, q.count);
      default:
        break;
    }
    await this.ctx.authorize(scope, q.applicationId);
    const a = q.applicationId;
    switch (q.kind) {
      case 'application.environment':
        return this.environment();
      case 'channels.list':
        return this.channels(a, await this.ctx.store.redis.hkeys(this.k.appChannels(a)));
      case 'channel.get':
        return this.one(await this.channels(a, [esc(q.channelId)]), `Channel '${q.channelId}' is not active.`);
      case 'client.channels':
        await this.requireClient(a, q);
        return this.channels(
          a,
          await this.ctx.store.redis.smembers(this.k.clientChannels(a, q.userId, q.deviceId, q.clientId)),
        );
      case 'users.list':
        return this.users(a);
      case 'user.get':
        return this.one(await this.users(a, q.userId), `User '${q.userId}' has no registered client.`);
      case 'channel.users':
        await this.requireChannel(a, q.channelId);
        return this.channelUsers(a, q.channelId);
      case 'channel.user.get':
        return this.one(
          await this.channelUsers(a, q.channelId, q.userId),
          `User '${q.userId}' is not in channel '${q.channelId}'.`,
        );
      case 'user.devices':
        return this.devices(a, q.userId);
      case 'device.get':
        return this.one(
          await this.devices(a, q.userId, q.deviceId),
          `Device '${q.deviceId}' of user '${q.userId}' has no registered client.`,
        );
      case 'channel.devices':
        await this.requireChannel(a, q.channelId);
        return this.channelDevices(a, q.channelId);
      case 'channel.user.devices':
        return this.nonEmpty(
          await this.channelDevices(a, q.channelId, q.userId),
          `User '${q.userId}' is not in channel '${q.channelId}'.`,
        );
      case 'channel.device.get':
        return this.one(
          await this.channelDevices(a, q.channelId, q.userId, q.deviceId),
          `Device '${q.deviceId}' of user '${q.userId}' is not in channel '${q.channelId}'.`,
        );
      case 'device.clients':
        return this.nonEmpty(
          await this.deviceClients(a, q.userId, q.deviceId),
          `Device '${q.deviceId}' of user '${q.userId}' has no registered client.`,
        );
      case 'client.get':
        return this.one(
          await this.deviceClients(a, q.userId, q.deviceId, q.clientId),
          `Client '${q.clientId}' is not registered.`,
        );
      case 'channel.clients':
        await this.requireChannel(a, q.channelId);
        return this.channelClients(a, q.channelId);
      case 'channel.device.clients':
        return this.nonEmpty(
          await this.channelClients(a, q.channelId, q),
          `Device '${q.deviceId}' of user '${q.userId}' is not in channel '${q.channelId}'.`,
        );
      case 'channel.client.get':
        return this.one(
          await this.channelClients(a, q.channelId, q),
          `Client '${q.clientId}' is not in channel '${q.channelId}'.`,
        );
      case 'channel.connections':
        await this.requireChannel(a, q.channelId);
        return this.connections(
          a,
          q.channelId,
          await this.ctx.store.redis.smembers(this.k.channelPart(a, q.channelId, 'conns')),
        );
      case 'channel.client.connections': {
        await this.requireMember(a, q.channelId, q);
        const cns = await this.ctx.store.redis.smembers(
          this.k.clientConnsInChannel(a, q.channelId, q.userId, q.deviceId, q.clientId),
        );
        return this.connections(
          a,
          q.channelId,
          cns.map((cn) => `${clientMember(q.userId, q.deviceId, q.clientId)}/${cn}`),
        );
      }
      case 'connection.get':
        return this.one(
          await this.connections(a, q.channelId, [
            `${clientMember(q.userId, q.deviceId, q.clientId)}/${esc(q.connectionId)}`,
          ]),
          `No connection '${q.connectionId}' of client '${q.clientId}' in channel '${q.channelId}'.`,
        );
    }
    throw new DomainError('ValidationFailed', 'Unknown query.');
  }

  private one<T>(list: T[], message: string): T {
    const first = list[0];
    if (first === undefined) throw new DomainError('NotFound', message);
    return first;
  }

  private nonEmpty<T>(list: T[], message: string): T[] {
    if (list.length === 0) throw new DomainError('NotFound', message);
    return list;
  }

  private async requireChannel(a: string, channelId: string) {
    if (!(await this.ctx.store.redis.hexists(this.k.appChannels(a), esc(channelId))))
      throw new DomainError('NotFound', `Channel '${channelId}' is not active.`);
  }

  private async requireClient(a: string, c: ClientIds) {
    if (!(await this.ctx.store.redis.exists(this.k.client(a, c.userId, c.deviceId, c.clientId))))
      throw new DomainError('NotFound', `Client '${c.clientId}' is not registered.`);
  }

  private async requireMember(a: string, channelId: string, c: ClientIds) {
    if (
      !(await this.ctx.store.redis.hexists(
        this.k.channelPart(a, channelId, 'clients'),
        clientMember(c.userId, c.deviceId, c.clientId),
      ))
    ) {
      throw new DomainError('NotFound', `Client '${c.clientId}' is not in channel '${channelId}'.`);
    }
  }

  /** The applications in use: every organization's for an operator, the caller's own otherwise. */
  async applications(scope: CallerScope): Promise<string[]> {
    const index = await this.ctx.store.appsIndex();
    return [...index]
      .filter(([, v]) => v.inUse && (scope.operator || v.organizationId === scope.organizationId))
      .map(([a]) => a)
      .sort();
  }

  /** The application snapshot: tenancy check and counts in one atomic read (one script). */
  application(scope: CallerScope, a: string): Promise<ApplicationSnapshot> {
    return this.ctx.store.appSnapshot(a).then((s) => {
      this.ctx.checkOwner(scope, a, { organizationId: s.organizationId, inUse: s.inUse });
      const [channels, users, devices, clients, conns] = s.counts;
      return {
        id: a,
        channelCount: n(channels),
        userCount: n(users),
        deviceCount: n(devices),
        clientCount: n(clients),
        connectionCount: n(conns),
      };
    });
  }

  async environment(): Promise<ApplicationEnvironment> {
    const env = await this.ctx.servers.environment();
    return {
      externalAdminUrl: this.config.externalAdminUrl,
      externalSyncUrl: this.config.externalSyncUrl,
      externalSipAuthority: this.config.externalSipAuthority ?? null,
      gateways: env.gateway,
      mediaServers: env.mediaserver,
      connectors: env.connector,
      recordingMonitors: env.recording,
      recordingMuxers: env.recording,
      recordingMovers: env.recording,
    };
  }

  /** Snapshots of channels given by escaped id; inactive ones are left out. */
  async channels(a: string, escapedIds: string[]): Promise<ChannelSnapshot[]> {
    const k = this.k;
    const cmds: Cmd[] = [];
    for (const e of escapedIds) {
      const ch = unesc(e);
      cmds.push(
        ['hlen', k.channelPart(a, ch, 'users')],
        ['hlen', k.channelPart(a, ch, 'devices')],
        ['hlen', k.channelPart(a, ch, 'clients')],
        ['scard', k.channelPart(a, ch, 'conns')],
      );
    }
    const r = await this.read(cmds);
    const out: ChannelSnapshot[] = [];
    escapedIds.forEach((e, i) => {
      const clientCount = n(r[i * 4 + 2]);
      if (clientCount === 0) return;
      out.push({
        id: unesc(e),
        userCount: n(r[i * 4]),
        deviceCount: n(r[i * 4 + 1]),
        clientCount,
        connectionCount: n(r[i * 4 + 3]),
      });
    });
    return out.sort(byId);
  }

  async users(a: string, only?: string): Promise<UserInfo[]> {
    const k = this.k;
    let entries: Array<[string, string]>;
    if (only === undefined) entries = Object.entries(await this.ctx.store.redis.hgetall(k.appUsers(a)));
    else {
      const v = await this.ctx.store.redis.hget(k.appUsers(a), esc(only));
      entries = v === null ? [] : [[esc(only), v]];
    }
    const cmds: Cmd[] = [];
    for (const [e] of entries) {
      const u = unesc(e);
      cmds.push(['hget', k.user(a, u), 'alias'], ['hlen', k.userDevices(a, u)], ['hlen', k.userChannels(a, u)]);
    }
    const r = await this.read(cmds);
    return entries
      .map(([e, clients], i) => ({
        id: unesc(e),
        alias: (r[i * 3] as string | null) ?? null,
        deviceCount: n(r[i * 3 + 1]),
        clientCount: n(clients),
        channelCount: n(r[i * 3 + 2]),
      }))
      .filter((x) => x.clientCount > 0)
      .sort(byId);
  }

  async channelUsers(a: string, channelId: string, only?: string): Promise<UserInChannelSnapshot[]> {
    const k = this.k;
    const usersKey = k.channelPart(a, channelId, 'users');
    const entries: Array<[string, string]> =
      only === undefined
        ? Object.entries(await this.ctx.store.redis.hgetall(usersKey))
        : await this.ctx.store.redis
            .hget(usersKey, esc(only))
            .then((v) => (v === null ? [] : [[esc(only), v] as [string, string]]));
    const cmds: Cmd[] = [];
    for (const [e] of entries) {
      cmds.push(
        ['hget', k.user(a, unesc(e)), 'alias'],
        ['hget', k.channelPart(a, channelId, 'udev'), e],
        ['hget', k.channelPart(a, channelId, 'uconns'), e],
      );
    }
    const r = await this.read(cmds);
    return entries
      .map(([e, clients], i) => ({
        id: unesc(e),
        alias: (r[i * 3] as string | null) ?? null,
        deviceCount: n(r[i * 3 + 1]),
        clientCount: n(clients),
        connectionCount: n(r[i * 3 + 2]),
      }))
      .filter((x) => x.clientCount > 0)
      .sort(byId);
  }

  async devices(a: string, userId: string, only?: string): Promise<DeviceInfo[]> {
    const k = this.k;
    const all = await this.ctx.store.redis.hgetall(k.userDevices(a, userId));
    const entries = Object.entries(all).filter(([e]) => only === undefined || e === esc(only));
    if (only === undefined && entries.length === 0)
      throw new DomainError('NotFound', `User '${userId}' has no registered client.`);
    const cmds: Cmd[] = [];
    for (const [e] of entries) {
      const d = unesc(e);
      cmds.push(['hget', k.device(a, userId, d), 'alias'], ['hlen', k.deviceChannels(a, userId, d)]);
    }
    const r = await this.read(cmds);
    return entries
      .map(([e, clients], i) => ({
        id: unesc(e),
        userId,
        alias: (r[i * 2] as string | null) ?? null,
        clientCount: n(clients),
        channelCount: n(r[i * 2 + 1]),
      }))
      .filter((x) => x.clientCount > 0)
      .sort(byId);
  }

  async channelDevices(
    a: string,
    channelId: string,
    userId?: string,
    deviceId?: string,
  ): Promise<DeviceInChannelSnapshot[]> {
    const k = this.k;
    const all = await this.ctx.store.redis.hgetall(k.channelPart(a, channelId, 'devices'));
    const prefix =
      userId === undefined ? '' : deviceId === undefined ? `${esc(userId)}/` : `${esc(userId)}/${esc(deviceId)}`;
    const entries = Object.entries(all).filter(([m]) => (deviceId === undefined ? m.startsWith(prefix) : m === prefix));
    const cmds: Cmd[] = [];
    for (const [m] of entries) {
      const [u = '', d = ''] = splitMember(m);
      cmds.push(['hget', k.device(a, u, d), 'alias'], ['hget', k.channelPart(a, channelId, 'dconns'), m]);
    }
    const r = await this.read(cmds);
    return entries
      .map(([m, clients], i) => {
        const [u = '', d = ''] = splitMember(m);
        return {
          id: d,
          userId: u,
          alias: (r[i * 2] as string | null) ?? null,
          clientCount: n(clients),
          connectionCount: n(r[i * 2 + 1]),
        };
      })
      .filter((x) => x.clientCount > 0)
      .sort((x, y) => x.userId.localeCompare(y.userId) || x.id.localeCompare(y.id));
  }

  async deviceClients(a: string, userId: string, deviceId: string, only?: string): Promise<ClientInfo[]> {
    const k = this.k;
    const ids =
      only === undefined
        ? (await this.ctx.store.redis.smembers(k.deviceClients(a, userId, deviceId))).map(unesc)
        : [only];
    const cmds: Cmd[] = [];
    for (const cl of ids)
      cmds.push(['hgetall', k.client(a, userId, deviceId, cl)], ['scard', k.clientChannels(a, userId, deviceId, cl)]);
    const r = await this.read(cmds);
    const out: ClientInfo[] = [];
    ids.forEach((cl, i) => {
      const hash = (r[i * 2] as Hash) ?? {};
      if (Object.keys(hash).length === 0) return;
      const c = clientRecord({ userId, deviceId, clientId: cl }, hash);
      out.push({
        id: cl,
        tag: c.tag,
        userId,
        userAlias: c.userAlias,
        deviceId,
        deviceAlias: c.deviceAlias,
        roles: c.roles,
        channelCount: n(r[i * 2 + 1]),
      });
    });
    return out.sort(byId);
  }

  async channelClients(
    a: string,
    channelId: string,
    who?: { userId: string; deviceId: string; clientId?: string },
  ): Promise<ClientInChannelSnapshot[]> {
    const k = this.k;
    const members = await this.ctx.store.redis.hkeys(k.channelPart(a, channelId, 'clients'));
    const picked = members.filter((m) => {
      if (!who) return true;
      const base = `${esc(who.userId)}/${esc(who.deviceId)}/`;
      return who.clientId === undefined ? m.startsWith(base) : m === `${base}${esc(who.clientId)}`;
    });
    const cmds: Cmd[] = [];
    for (const m of picked) {
      const [u = '', d = '', cl = ''] = splitMember(m);
      cmds.push(['hget', k.client(a, u, d, cl), 'roles'], ['scard', k.clientConnsInChannel(a, channelId, u, d, cl)]);
    }
    const r = await this.read(cmds);
    return picked
      .map((m, i) => {
        const [u = '', d = '', cl = ''] = splitMember(m);
        const c = clientRecord(
          { userId: u, deviceId: d, clientId: cl },
          { roles: (r[i * 2] as string | null) ?? '[]' },
        );
        return { id: cl, userId: u, deviceId: d, roles: c.roles, connectionCount: n(r[i * 2 + 1]) };
      })
      .sort(
        (x, y) => x.userId.localeCompare(y.userId) || x.deviceId.localeCompare(y.deviceId) || x.id.localeCompare(y.id),
      );
  }

  /** Connection infos of members `u/d/cl/cn` (escaped) of a channel, in one snapshot. */
  async connections(a: string, channelId: string, members: string[]): Promise<ConnectionInfo[]> {
    const k = this.k;
    const cmds: Cmd[] = [['hgetall', k.channelPart(a, channelId, 'cfg')]];
    for (const m of members) {
      const [u = '', d = '', cl = '', cn = ''] = splitMember(m);
      cmds.push(
        ['hgetall', k.connection(a, channelId, u, d, cl, cn)],
        ['hgetall', k.client(a, u, d, cl)],
        ['hgetall', k.userCfg(a, channelId, u)],
        ['hgetall', k.deviceCfg(a, channelId, u, d)],
        ['hgetall', k.clientCfg(a, channelId, u, d, cl)],
        ['hgetall', k.connectionCfg(a, channelId, u, d, cl, cn)],
      );
    }
    const r = await this.read(cmds);
    const ch = (r[0] as Hash) ?? {};
    const out: ConnectionInfo[] = [];
    members.forEach((m, i) => {
      const [u = '', d = '', cl = '', cn = ''] = splitMember(m);
      const base = 1 + i * 6;
      const conn = (r[base] as Hash) ?? {};
      if (Object.keys(conn).length === 0) return;
      const client = this.ctx.client({ userId: u, deviceId: d, clientId: cl }, (r[base + 1] as Hash) ?? {});
      const levels = {
        ch,
        u: (r[base + 2] as Hash) ?? {},
        d: (r[base + 3] as Hash) ?? {},
        c: (r[base + 4] as Hash) ?? {},
        n: (r[base + 5] as Hash) ?? {},
      };
      out.push(this.ctx.info(a, channelId, cn, client, conn, levels));
    });
    return out.sort(
      (x, y) =>
        x.userId.localeCompare(y.userId) ||
        x.deviceId.localeCompare(y.deviceId) ||
        x.clientId.localeCompare(y.clientId) ||
        x.id.localeCompare(y.id),
    );
  }

  datastore(cursor?: string, count?: number): Promise<DatastorePage> {
    return this.diagnostics.page(cursor ?? '0', count ?? 100);
  }
}

function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id.localeCompare(b.id);
}
