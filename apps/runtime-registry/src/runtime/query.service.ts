import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  OPERATOR_QUERIES,
  type ApplicationEnvironment,
  type ApplicationSnapshot,
  type CallerScope,
  type ChannelClientRef,
  type ChannelSnapshot,
  type ClientInChannelSnapshot,
  type ClientInfo,
  type ClientRef,
  type Connector,
  type ConnectionInfo,
  type DatastorePage,
  type DeviceInChannelSnapshot,
  type DeviceInfo,
  type EnvironmentServer,
  type MediaServer,
  type MediaServerStatistics,
  type RuntimeQuery,
  type UserInChannelSnapshot,
  type UserInfo,
} from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import type { ServerRole } from '../store/keys.js';
import { asCount, LiveReads, type ConnectionPath } from '../store/live-reads.js';
import { LiveStore } from '../store/live-store.js';
import { ServersStore } from '../store/servers-store.js';
import { clientOf, connectionInfoOf } from './connection-events.js';
import { Diagnostics } from './diagnostics.js';
import { checkOwner, requireOperator, type ApplicationOwnership } from './tenancy.js';

/** The snapshot reads of the live model the queries need (LiveReads). */
export type QueryReads = Pick<
  LiveReads,
  | 'channelActive'
  | 'clientRegistered'
  | 'channelMember'
  | 'activeChannelIds'
  | 'clientChannelIds'
  | 'channelCounts'
  | 'userCounts'
  | 'channelUserCounts'
  | 'deviceCounts'
  | 'channelDeviceCounts'
  | 'deviceClientIds'
  | 'registeredClients'
  | 'channelClients'
  | 'channelMembers'
  | 'channelConnections'
  | 'clientConnectionIds'
  | 'connections'
>;

/** The applications as the store indexes them (LiveStore). */
export interface ApplicationReads {
  appsIndex(): Promise<Map<string, { gen: number; inUse: boolean; organizationId: string }>>;
  appSnapshot(applicationId: string): Promise<ApplicationOwnership & { counts: number[] }>;
  appOwner(applicationId: string): Promise<ApplicationOwnership>;
}

/** Media servers, connectors and the environment (ServersStore). */
export interface ServerReads {
  mediaServers(only?: string): Promise<MediaServer[]>;
  statistics(only?: string): Promise<MediaServerStatistics[]>;
  connectors(): Promise<Connector[]>;
  environment(): Promise<Record<ServerRole, EnvironmentServer[]>>;
}

export interface DatastorePages {
  page(cursor: string, count: number): Promise<DatastorePage>;
}

export type ExternalUrls = Pick<RegistryConfig, 'externalAdminUrl' | 'externalSyncUrl' | 'externalSipAuthority'>;

type ApplicationQuery = Exclude<Extract<RuntimeQuery, { applicationId: string }>, { kind: 'application.get' }>;

/**
 * Interface A reads (`runtime-registry.v1.query`). Lists are sorted by id. Tenancy: operators see
 * every application, anyone else only their organization's (others answer NotFound);
 * OPERATOR_QUERIES need an operator (else Forbidden).
 */
@Injectable()
export class QueryService {
  constructor(
    @Inject(LiveReads) private readonly reads: QueryReads,
    @Inject(LiveStore) private readonly applications: ApplicationReads,
    @Inject(ServersStore) private readonly servers: ServerReads,
    @Inject(Diagnostics) private readonly diagnostics: DatastorePages,
    @Inject(SERVICE_CONFIG) private readonly urls: ExternalUrls,
  ) {}

  /**
   * Not async itself: the application snapshot (the read of every admin dashboard poll) goes
   * straight to its one script, without the extra promise of another async layer per request.
   */
  handle(scope: CallerScope, query: RuntimeQuery): Promise<unknown> {
    if (query.kind === 'application.get') return this.application(scope, query.applicationId);
    return this.other(scope, query);
  }

  private async other(scope: CallerScope, query: Exclude<RuntimeQuery, { kind: 'application.get' }>) {
    if ((OPERATOR_QUERIES as readonly string[]).includes(query.kind)) requireOperator(scope);
    if (isApplicationQuery(query)) {
      checkOwner(scope, query.applicationId, await this.applications.appOwner(query.applicationId));
      return this.applicationQuery(query);
    }
    switch (query.kind) {
      case 'applications.list':
        return this.applicationIds(scope);
      case 'mediaservers.list':
        return this.servers.mediaServers();
      case 'mediaserver.get':
        return one(await this.servers.mediaServers(query.mediaServerId), unknownServer(query.mediaServerId));
      case 'mediaserver.stats':
        return one(await this.servers.statistics(query.mediaServerId), unknownServer(query.mediaServerId));
      case 'mediaservers.stats':
        return this.servers.statistics();
      case 'connectors.list':
        return this.servers.connectors();
      case 'diagnostics.datastore':
        return this.diagnostics.page(query.cursor ?? '0', query.count ?? 100);
    }
  }

  private async applicationQuery(query: ApplicationQuery): Promise<unknown> {
    const a = query.applicationId;
    switch (query.kind) {
      case 'application.environment':
        return this.environment();
      case 'channels.list':
        return this.channels(a, await this.reads.activeChannelIds(a));
      case 'channel.get':
        return one(await this.channels(a, [query.channelId]), `Channel '${query.channelId}' is not active.`);
      case 'client.channels':
        await this.requireClient(query);
        return this.channels(a, await this.reads.clientChannelIds(query));
      case 'users.list':
        return this.users(a);
      case 'user.get':
        return one(await this.users(a, query.userId), `User '${query.userId}' has no registered client.`);
      case 'channel.users':
        await this.requireChannel(a, query.channelId);
        return this.channelUsers(a, query.channelId);
      case 'channel.user.get':
        return one(await this.channelUsers(a, query.channelId, query.userId), notInChannel(query, 'User'));
      case 'user.devices':
        return this.devices(a, query.userId);
      case 'device.get':
        return one(await this.devices(a, query.userId, query.deviceId), deviceWithoutClient(query));
      case 'channel.devices':
        await this.requireChannel(a, query.channelId);
        return this.channelDevices(a, query.channelId);
      case 'channel.user.devices':
        return nonEmpty(await this.channelDevices(a, query.channelId, query), notInChannel(query, 'User'));
      case 'channel.device.get':
        return one(await this.channelDevices(a, query.channelId, query), deviceNotInChannel(query));
      case 'device.clients':
        return nonEmpty(await this.deviceClients(a, query.userId, query.deviceId), deviceWithoutClient(query));
      case 'client.get':
        return one(
          await this.deviceClients(a, query.userId, query.deviceId, query.clientId),
          `Client '${query.clientId}' is not registered.`,
        );
      case 'channel.clients':
        await this.requireChannel(a, query.channelId);
        return this.channelClients(a, query.channelId);
      case 'channel.device.clients':
        return nonEmpty(await this.channelClients(a, query.channelId, query), deviceNotInChannel(query));
      case 'channel.client.get':
        return one(await this.channelClients(a, query.channelId, query), notInChannel(query, 'Client'));
      case 'channel.connections':
        await this.requireChannel(a, query.channelId);
        return this.connections(a, query.channelId, await this.reads.channelConnections(a, query.channelId));
      case 'channel.client.connections': {
        await this.requireMember(query);
        const connectionIds = await this.reads.clientConnectionIds(query);
        return this.connections(
          a,
          query.channelId,
          connectionIds.map((connectionId) => ({ ...clientPath(query), connectionId })),
        );
      }
      case 'connection.get':
        return one(
          await this.connections(a, query.channelId, [{ ...clientPath(query), connectionId: query.connectionId }]),
          `No connection '${query.connectionId}' of client '${query.clientId}' in channel '${query.channelId}'.`,
        );
    }
  }

  private async requireChannel(applicationId: string, channelId: string) {
    if (!(await this.reads.channelActive(applicationId, channelId)))
      throw new DomainError('NotFound', `Channel '${channelId}' is not active.`);
  }

  private async requireClient(c: ClientRef) {
    if (!(await this.reads.clientRegistered(c)))
      throw new DomainError('NotFound', `Client '${c.clientId}' is not registered.`);
  }

  private async requireMember(c: ChannelClientRef) {
    if (!(await this.reads.channelMember(c)))
      throw new DomainError('NotFound', `Client '${c.clientId}' is not in channel '${c.channelId}'.`);
  }

  /** The applications in use: every organization's for an operator, the caller's own otherwise. */
  async applicationIds(scope: CallerScope): Promise<string[]> {
    const index = await this.applications.appsIndex();
    return [...index]
      .filter(([, v]) => v.inUse && (scope.operator || v.organizationId === scope.organizationId))
      .map(([a]) => a)
      .sort();
  }

  /** The application snapshot: tenancy check and counts in one atomic read (one script). */
  application(scope: CallerScope, applicationId: string): Promise<ApplicationSnapshot> {
    return this.applications.appSnapshot(applicationId).then((s) => {
      checkOwner(scope, applicationId, s);
      const [channels, users, devices, clients, connections] = s.counts;
      return {
        id: applicationId,
        channelCount: asCount(channels),
        userCount: asCount(users),
        deviceCount: asCount(devices),
        clientCount: asCount(clients),
        connectionCount: asCount(connections),
      };
    });
  }

  async environment(): Promise<ApplicationEnvironment> {
    const servers = await this.servers.environment();
    return {
      externalAdminUrl: this.urls.externalAdminUrl,
      externalSyncUrl: this.urls.externalSyncUrl,
      externalSipAuthority: this.urls.externalSipAuthority ?? null,
      gateways: servers.gateway,
      mediaServers: servers.mediaserver,
      connectors: servers.connector,
      recordingMonitors: servers.recording,
      recordingMuxers: servers.recording,
      recordingMovers: servers.recording,
    };
  }

  /** Snapshots of these channels; inactive ones (no member client) are left out. */
  async channels(applicationId: string, channelIds: string[]): Promise<ChannelSnapshot[]> {
    const counts = await this.reads.channelCounts(applicationId, channelIds);
    return counts
      .filter((c) => c.clientCount > 0)
      .map(({ channelId, ...c }) => ({ id: channelId, ...c }))
      .sort(byId);
  }

  async users(applicationId: string, onlyUserId?: string): Promise<UserInfo[]> {
    const users = await this.reads.userCounts(applicationId, onlyUserId);
    return users
      .filter((u) => u.clientCount > 0)
      .map(({ userId, ...u }) => ({ id: userId, ...u }))
      .sort(byId);
  }

  async channelUsers(applicationId: string, channelId: string, onlyUserId?: string): Promise<UserInChannelSnapshot[]> {
    const users = await this.reads.channelUserCounts(applicationId, channelId, onlyUserId);
    return users
      .filter((u) => u.clientCount > 0)
      .map(({ userId, ...u }) => ({ id: userId, ...u }))
      .sort(byId);
  }

  /** A user's devices (or only `onlyDeviceId`); a user without any device answers NotFound. */
  async devices(applicationId: string, userId: string, onlyDeviceId?: string): Promise<DeviceInfo[]> {
    const all = await this.reads.deviceCounts(applicationId, userId);
    if (onlyDeviceId === undefined && all.length === 0)
      throw new DomainError('NotFound', `User '${userId}' has no registered client.`);
    return all
      .filter((d) => (onlyDeviceId === undefined || d.deviceId === onlyDeviceId) && d.clientCount > 0)
      .map(({ deviceId, ...d }) => ({ id: deviceId, ...d }))
      .sort(byId);
  }

  /** The member devices of a channel: all, a user's, or one device. */
  async channelDevices(
    applicationId: string,
    channelId: string,
    only: { userId?: string; deviceId?: string } = {},
  ): Promise<DeviceInChannelSnapshot[]> {
    const all = await this.reads.channelDeviceCounts(applicationId, channelId);
    return all
      .filter(
        (d) =>
          (only.userId === undefined || d.userId === only.userId) &&
          (only.deviceId === undefined || d.deviceId === only.deviceId) &&
          d.clientCount > 0,
      )
      .map(({ deviceId, ...d }) => ({ id: deviceId, ...d }))
      .sort((x, y) => x.userId.localeCompare(y.userId) || x.id.localeCompare(y.id));
  }

  async deviceClients(applicationId: string, userId: string, deviceId: string, only?: string): Promise<ClientInfo[]> {
    const clientIds = only === undefined ? await this.reads.deviceClientIds(applicationId, userId, deviceId) : [only];
    const clients = await this.reads.registeredClients(applicationId, userId, deviceId, clientIds);
    return clients
      .filter((c) => Object.keys(c.registration).length > 0)
      .map((c) => {
        const record = clientOf(c, c.registration);
        return {
          id: c.clientId,
          tag: record.tag,
          userId,
          userAlias: record.userAlias,
          deviceId,
          deviceAlias: record.deviceAlias,
          roles: record.roles,
          channelCount: c.channelCount,
        };
      })
      .sort(byId);
  }

  /** The member clients of a channel: all, a device's, or one client. */
  async channelClients(
    applicationId: string,
    channelId: string,
    only?: { userId: string; deviceId: string; clientId?: string },
  ): Promise<ClientInChannelSnapshot[]> {
    const members = (await this.reads.channelClients(applicationId, channelId)).filter(
      (m) =>
        !only ||
        (m.userId === only.userId &&
          m.deviceId === only.deviceId &&
          (only.clientId === undefined || m.clientId === only.clientId)),
    );
    const counted = await this.reads.channelMembers(applicationId, channelId, members);
    return counted
      .map((m) => ({
        id: m.clientId,
        userId: m.userId,
        deviceId: m.deviceId,
        roles: clientOf(m, { roles: m.roles ?? '[]' }).roles,
        connectionCount: m.connectionCount,
      }))
      .sort(
        (x, y) => x.userId.localeCompare(y.userId) || x.deviceId.localeCompare(y.deviceId) || x.id.localeCompare(y.id),
      );
  }

  /** The infos of these connections of a channel (with their effective settings), in one snapshot. */
  async connections(applicationId: string, channelId: string, paths: ConnectionPath[]): Promise<ConnectionInfo[]> {
    const stored = await this.reads.connections(applicationId, channelId, paths);
    return stored
      .filter((s) => Object.keys(s.connection).length > 0)
      .map((s) =>
        connectionInfoOf(applicationId, {
          channelId,
          connectionId: s.connectionId,
          client: clientOf(s, s.registration),
          conn: s.connection,
          levels: s.levels,
        }),
      )
      .sort(
        (x, y) =>
          x.userId.localeCompare(y.userId) ||
          x.deviceId.localeCompare(y.deviceId) ||
          x.clientId.localeCompare(y.clientId) ||
          x.id.localeCompare(y.id),
      );
  }
}

function isApplicationQuery(query: RuntimeQuery): query is ApplicationQuery {
  return 'applicationId' in query && query.kind !== 'application.get';
}

function one<T>(list: T[], message: string): T {
  const first = list[0];
  if (first === undefined) throw new DomainError('NotFound', message);
  return first;
}

function nonEmpty<T>(list: T[], message: string): T[] {
  if (list.length === 0) throw new DomainError('NotFound', message);
  return list;
}

function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id.localeCompare(b.id);
}

function clientPath(c: ClientRef) {
  return { userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
}

function unknownServer(mediaServerId: string): string {
  return `No media server '${mediaServerId}' is registered.`;
}

function notInChannel(q: { channelId: string; userId: string; clientId?: string }, who: 'User' | 'Client'): string {
  return `${who} '${who === 'User' ? q.userId : q.clientId}' is not in channel '${q.channelId}'.`;
}

function deviceWithoutClient(q: { userId: string; deviceId: string }): string {
  return `Device '${q.deviceId}' of user '${q.userId}' has no registered client.`;
}

function deviceNotInChannel(q: { userId: string; deviceId: string; channelId: string }): string {
  return `Device '${q.deviceId}' of user '${q.userId}' is not in channel '${q.channelId}'.`;
}
