import { Inject, Injectable } from '@nestjs/common';
import type { ChannelClientRef, ClientRef } from '@switchboard/contracts';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import type { LevelSnapshot } from '../model/settings.js';
import { clientMember, esc, KEY_PREFIX, RegistryKeys, splitMember, unesc } from './keys.js';

type Hash = Record<string, string>;
type Command = [string, ...Array<string | number>];
type ChannelPart = Parameters<RegistryKeys['channelPart']>[2];

/** A client of an application, without the application (which the read is about). */
export type ClientPath = Omit<ClientRef, 'applicationId'>;
/** A connection inside a channel, without the application and the channel (which the read is about). */
export interface ConnectionPath extends ClientPath {
  connectionId: string;
}

export interface ChannelCounts {
  channelId: string;
  userCount: number;
  deviceCount: number;
  clientCount: number;
  connectionCount: number;
}
export interface UserCounts {
  userId: string;
  alias: string | null;
  deviceCount: number;
  clientCount: number;
  channelCount: number;
}
export interface ChannelUserCounts {
  userId: string;
  alias: string | null;
  deviceCount: number;
  clientCount: number;
  connectionCount: number;
}
export interface DeviceCounts {
  userId: string;
  deviceId: string;
  alias: string | null;
  clientCount: number;
  channelCount: number;
}
export interface ChannelDeviceCounts {
  userId: string;
  deviceId: string;
  alias: string | null;
  clientCount: number;
  connectionCount: number;
}
/** A client as registered (`registration` empty when it is not) and how many channels it joined. */
export interface RegisteredClient extends ClientPath {
  registration: Hash;
  channelCount: number;
}
export interface ChannelMember extends ClientPath {
  /** The client's roles as stored (JSON text), null when unknown. */
  roles: string | null;
  connectionCount: number;
}
/** A connection as stored (`connection` empty when it is gone), its client and its settings levels. */
export interface StoredConnectionView extends ConnectionPath {
  connection: Hash;
  registration: Hash;
  levels: LevelSnapshot;
}

/** A Redis reply as a count (missing or unreadable: 0). */
export function asCount(reply: unknown): number {
  return Math.max(0, Number(reply ?? 0) || 0);
}

/** Runs read commands in one MULTI: a consistent snapshot. */
export async function snapshot(redis: Redis, commands: Command[]): Promise<unknown[]> {
  if (commands.length === 0) return [];
  const results = (await redis.multi(commands as unknown as string[][]).exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

/** Splits a read's replies into one group of `size` per item read. */
function groups(replies: unknown[], size: number, offset = 0): unknown[][] {
  const out: unknown[][] = [];
  for (let i = offset; i < replies.length; i += size) out.push(replies.slice(i, i + size));
  return out;
}

function clientPathOf(member: string): ClientPath {
  const [userId = '', deviceId = '', clientId = ''] = splitMember(member);
  return { userId, deviceId, clientId };
}

/**
 * The reads of the live model that interface A's queries and message targets need: each one or
 * two MULTI snapshots, answering unescaped ids and counts (see keys.ts for the layout).
 */
@Injectable()
export class LiveReads {
  private readonly keys: RegistryKeys;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RegistryKeys(prefix);
  }

  private read(commands: Command[]): Promise<unknown[]> {
    return snapshot(this.redis, commands);
  }

  async channelActive(applicationId: string, channelId: string): Promise<boolean> {
    return (await this.redis.hexists(this.keys.appChannels(applicationId), esc(channelId))) === 1;
  }

  async clientRegistered(c: ClientRef): Promise<boolean> {
    return (await this.redis.exists(this.keys.client(c.applicationId, c.userId, c.deviceId, c.clientId))) === 1;
  }

  async channelMember(c: ChannelClientRef): Promise<boolean> {
    const members = this.keys.channelPart(c.applicationId, c.channelId, 'clients');
    return (await this.redis.hexists(members, clientMember(c.userId, c.deviceId, c.clientId))) === 1;
  }

  /** The registration of a client (empty when it is not registered). */
  registration(c: ClientRef): Promise<Hash> {
    return this.redis.hgetall(this.keys.client(c.applicationId, c.userId, c.deviceId, c.clientId));
  }

  /**
   * A message sender as one snapshot: its registration (empty when not registered), its application's
   * owner, and with `channelId` its channel claim (JSON text; null when not a member).
   */
  async sender(
    c: ClientRef,
    channelId: string | null,
  ): Promise<{ registration: Hash; organizationId: string | null; claim: string | null }> {
    const k = this.keys;
    const a = c.applicationId;
    const commands: Command[] = [
      ['hgetall', k.client(a, c.userId, c.deviceId, c.clientId)],
      ['hget', k.app(a), 'organizationId'],
    ];
    if (channelId !== null)
      commands.push(['hget', k.channelPart(a, channelId, 'clients'), clientMember(c.userId, c.deviceId, c.clientId)]);
    const [registration, organizationId, claim] = await this.read(commands);
    return {
      registration: (registration as Hash | null) ?? {},
      organizationId: (organizationId as string | null) ?? null,
      claim: (claim as string | null | undefined) ?? null,
    };
  }

  /** The gateway replica holding a client's registration. */
  gatewayOf(c: ClientRef): Promise<string | null> {
    return this.redis.hget(this.keys.client(c.applicationId, c.userId, c.deviceId, c.clientId), 'gatewayId');
  }

  /** The gateway replicas holding these clients, in the same order. */
  async gatewaysOf(applicationId: string, clients: ClientPath[]): Promise<Array<string | null>> {
    const replies = await this.read(
      clients.map((c) => ['hget', this.keys.client(applicationId, c.userId, c.deviceId, c.clientId), 'gatewayId']),
    );
    return replies.map((gatewayId) => (gatewayId as string | null) ?? null);
  }

  async activeChannelIds(applicationId: string): Promise<string[]> {
    return (await this.redis.hkeys(this.keys.appChannels(applicationId))).map(unesc);
  }

  async clientChannelIds(c: ClientRef): Promise<string[]> {
    const key = this.keys.clientChannels(c.applicationId, c.userId, c.deviceId, c.clientId);
    return (await this.redis.smembers(key)).map(unesc);
  }

  /** The counts of these channels (an inactive channel counts no client). */
  async channelCounts(applicationId: string, channelIds: string[]): Promise<ChannelCounts[]> {
    const part = (channelId: string, name: ChannelPart) => this.keys.channelPart(applicationId, channelId, name);
    const replies = await this.read(
      channelIds.flatMap((ch): Command[] => [
        ['hlen', part(ch, 'users')],
        ['hlen', part(ch, 'devices')],
        ['hlen', part(ch, 'clients')],
        ['scard', part(ch, 'conns')],
      ]),
    );
    return groups(replies, 4).map(([users, devices, clients, connections], i) => ({
      channelId: channelIds[i]!,
      userCount: asCount(users),
      deviceCount: asCount(devices),
      clientCount: asCount(clients),
      connectionCount: asCount(connections),
    }));
  }

  /** The users with registered clients (or only `onlyUserId`). */
  async userCounts(applicationId: string, onlyUserId?: string): Promise<UserCounts[]> {
    const k = this.keys;
    const clientsPerUser = await this.hashEntries(k.appUsers(applicationId), onlyUserId);
    const replies = await this.read(
      clientsPerUser.flatMap(([user]): Command[] => {
        const userId = unesc(user);
        return [
          ['hget', k.user(applicationId, userId), 'alias'],
          ['hlen', k.userDevices(applicationId, userId)],
          ['hlen', k.userChannels(applicationId, userId)],
        ];
      }),
    );
    return groups(replies, 3).map(([alias, devices, channels], i) => ({
      userId: unesc(clientsPerUser[i]![0]),
      alias: (alias as string | null) ?? null,
      deviceCount: asCount(devices),
      clientCount: asCount(clientsPerUser[i]![1]),
      channelCount: asCount(channels),
    }));
  }

  /** The member users of a channel (or only `onlyUserId`). */
  async channelUserCounts(applicationId: string, channelId: string, onlyUserId?: string): Promise<ChannelUserCounts[]> {
    const k = this.keys;
    const part = (name: ChannelPart) => k.channelPart(applicationId, channelId, name);
    const clientsPerUser = await this.hashEntries(part('users'), onlyUserId);
    const replies = await this.read(
      clientsPerUser.flatMap(([user]): Command[] => [
        ['hget', k.user(applicationId, unesc(user)), 'alias'],
        ['hget', part('udev'), user],
        ['hget', part('uconns'), user],
      ]),
    );
    return groups(replies, 3).map(([alias, devices, connections], i) => ({
      userId: unesc(clientsPerUser[i]![0]),
      alias: (alias as string | null) ?? null,
      deviceCount: asCount(devices),
      clientCount: asCount(clientsPerUser[i]![1]),
      connectionCount: asCount(connections),
    }));
  }

  /** The devices of a user with registered clients. */
  async deviceCounts(applicationId: string, userId: string): Promise<DeviceCounts[]> {
    const k = this.keys;
    const clientsPerDevice = Object.entries(await this.redis.hgetall(k.userDevices(applicationId, userId)));
    const replies = await this.read(
      clientsPerDevice.flatMap(([device]): Command[] => [
        ['hget', k.device(applicationId, userId, unesc(device)), 'alias'],
        ['hlen', k.deviceChannels(applicationId, userId, unesc(device))],
      ]),
    );
    return groups(replies, 2).map(([alias, channels], i) => ({
      userId,
      deviceId: unesc(clientsPerDevice[i]![0]),
      alias: (alias as string | null) ?? null,
      clientCount: asCount(clientsPerDevice[i]![1]),
      channelCount: asCount(channels),
    }));
  }

  /** The member devices of a channel. */
  async channelDeviceCounts(applicationId: string, channelId: string): Promise<ChannelDeviceCounts[]> {
    const k = this.keys;
    const part = (name: ChannelPart) => k.channelPart(applicationId, channelId, name);
    const clientsPerDevice = Object.entries(await this.redis.hgetall(part('devices')));
    const replies = await this.read(
      clientsPerDevice.flatMap(([member]): Command[] => {
        const [userId = '', deviceId = ''] = splitMember(member);
        return [
          ['hget', k.device(applicationId, userId, deviceId), 'alias'],
          ['hget', part('dconns'), member],
        ];
      }),
    );
    return groups(replies, 2).map(([alias, connections], i) => {
      const [member, clients] = clientsPerDevice[i]!;
      const [userId = '', deviceId = ''] = splitMember(member);
      return {
        userId,
        deviceId,
        alias: (alias as string | null) ?? null,
        clientCount: asCount(clients),
        connectionCount: asCount(connections),
      };
    });
  }

  async deviceClientIds(applicationId: string, userId: string, deviceId: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.deviceClients(applicationId, userId, deviceId))).map(unesc);
  }

  /** The registrations of these clients of one device. */
  async registeredClients(
    applicationId: string,
    userId: string,
    deviceId: string,
    clientIds: string[],
  ): Promise<RegisteredClient[]> {
    const k = this.keys;
    const replies = await this.read(
      clientIds.flatMap((clientId): Command[] => [
        ['hgetall', k.client(applicationId, userId, deviceId, clientId)],
        ['scard', k.clientChannels(applicationId, userId, deviceId, clientId)],
      ]),
    );
    return groups(replies, 2).map(([registration, channels], i) => ({
      userId,
      deviceId,
      clientId: clientIds[i]!,
      registration: (registration as Hash | null) ?? {},
      channelCount: asCount(channels),
    }));
  }

  /** The clients registered in an application. */
  async applicationClients(applicationId: string): Promise<ClientPath[]> {
    return (await this.redis.smembers(this.keys.appClients(applicationId))).map(clientPathOf);
  }

  /** The member clients of a channel. */
  async channelClients(applicationId: string, channelId: string): Promise<ClientPath[]> {
    return (await this.redis.hkeys(this.keys.channelPart(applicationId, channelId, 'clients'))).map(clientPathOf);
  }

  /** The registered clients of every device of a user. */
  async userClients(applicationId: string, userId: string): Promise<ClientPath[]> {
    const devices = (await this.redis.hkeys(this.keys.userDevices(applicationId, userId))).map(unesc);
    const lists = (await this.read(
      devices.map((deviceId) => ['smembers', this.keys.deviceClients(applicationId, userId, deviceId)]),
    )) as Array<string[] | null>;
    return devices.flatMap((deviceId, i) =>
      (lists[i] ?? []).map((client) => ({ userId, deviceId, clientId: unesc(client) })),
    );
  }

  /** The roles and connection counts of these members of a channel. */
  async channelMembers(applicationId: string, channelId: string, members: ClientPath[]): Promise<ChannelMember[]> {
    const k = this.keys;
    const replies = await this.read(
      members.flatMap((m): Command[] => [
        ['hget', k.client(applicationId, m.userId, m.deviceId, m.clientId), 'roles'],
        ['scard', k.clientConnsInChannel(applicationId, channelId, m.userId, m.deviceId, m.clientId)],
      ]),
    );
    return groups(replies, 2).map(([roles, connections], i) => ({
      ...members[i]!,
      roles: (roles as string | null) ?? null,
      connectionCount: asCount(connections),
    }));
  }

  /** The connections open in a channel. */
  async channelConnections(applicationId: string, channelId: string): Promise<ConnectionPath[]> {
    const members = await this.redis.smembers(this.keys.channelPart(applicationId, channelId, 'conns'));
    return members.map((member) => {
      const [userId = '', deviceId = '', clientId = '', connectionId = ''] = splitMember(member);
      return { userId, deviceId, clientId, connectionId };
    });
  }

  /** The connections of a client in a channel. */
  async clientConnectionIds(c: ChannelClientRef): Promise<string[]> {
    const key = this.keys.clientConnsInChannel(c.applicationId, c.channelId, c.userId, c.deviceId, c.clientId);
    return (await this.redis.smembers(key)).map(unesc);
  }

  /** These connections of a channel with their clients and settings levels, in one snapshot. */
  async connections(
    applicationId: string,
    channelId: string,
    paths: ConnectionPath[],
  ): Promise<StoredConnectionView[]> {
    const k = this.keys;
    const a = applicationId;
    const replies = await this.read([
      ['hgetall', k.channelPart(a, channelId, 'cfg')],
      ...paths.flatMap(({ userId: u, deviceId: d, clientId: cl, connectionId: cn }): Command[] => [
        ['hgetall', k.connection(a, channelId, u, d, cl, cn)],
        ['hgetall', k.client(a, u, d, cl)],
        ['hgetall', k.userCfg(a, channelId, u)],
        ['hgetall', k.deviceCfg(a, channelId, u, d)],
        ['hgetall', k.clientCfg(a, channelId, u, d, cl)],
        ['hgetall', k.connectionCfg(a, channelId, u, d, cl, cn)],
      ]),
    ]);
    const hash = (reply: unknown) => (reply as Hash | null) ?? {};
    const channelLevel = hash(replies[0]);
    return groups(replies, 6, 1).map(([connection, registration, user, device, client, own], i) => ({
      ...paths[i]!,
      connection: hash(connection),
      registration: hash(registration),
      levels: { ch: channelLevel, u: hash(user), d: hash(device), c: hash(client), n: hash(own) },
    }));
  }

  /** The entries of a hash keyed by escaped id (or only the one of `onlyId`), as [escaped id, value]. */
  private async hashEntries(key: string, onlyId?: string): Promise<Array<[string, string]>> {
    if (onlyId === undefined) return Object.entries(await this.redis.hgetall(key));
    const value = await this.redis.hget(key, esc(onlyId));
    return value === null ? [] : [[esc(onlyId), value]];
  }
}
