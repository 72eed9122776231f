import { DomainError } from '@switchboard/contracts';
import { asHash, asList } from '../model/records.js';
import type { LevelSnapshot } from '../model/settings.js';
import { esc, splitMember, unesc } from './keys.js';
import type {
  ClientIds,
  ClosedConnection,
  ConnectionIds,
  ConnectionSnapshot,
  LeftChannel,
  SessionSnapshot,
} from './store-types.js';

// The scripts' raw answers (escaped ids, Lua tables) read as typed results, and their failures as DomainErrors.

export type Hash = Record<string, string>;

/** A script's failure (`failure(what, detail)` in Lua). */
export interface Failure {
  fail?: string;
  detail?: string;
}

export interface RawLevels {
  ch: unknown;
  u: unknown;
  d: unknown;
  c: unknown;
  n: unknown;
}
export interface RawClosed {
  ch: string;
  u: string;
  d: string;
  cl: string;
  cn: string;
  conn: unknown;
  levels: RawLevels;
  final: string;
  at: string;
}
export interface RawLeft {
  ch: string;
  u: string;
  d: string;
  cl: string;
  closed: unknown;
  deactivated: boolean;
  at: string;
}
export interface RawSnapshot {
  conn: unknown;
  client: unknown;
  levels: RawLevels;
  org: string;
}
export interface RawTarget {
  u: string;
  d: string;
  cl: string;
  cn: string;
  conn: unknown;
  client: unknown;
  levels: RawLevels;
}

export function escapedIds(client: ClientIds) {
  return { u: esc(client.userId), d: esc(client.deviceId), cl: esc(client.clientId) };
}
export function escapedPartialIds(client: Partial<ClientIds>) {
  return {
    u: client.userId === undefined ? undefined : esc(client.userId),
    d: client.deviceId === undefined ? undefined : esc(client.deviceId),
    cl: client.clientId === undefined ? undefined : esc(client.clientId),
  };
}
export function escapedConnectionIds(ref: ConnectionIds) {
  return { ...escapedIds(ref), ch: esc(ref.channelId), cn: esc(ref.connectionId) };
}
export function rawIds(answer: { u: string; d: string; cl: string }): ClientIds {
  const [userId = '', deviceId = '', clientId = ''] = splitMember(`${answer.u}/${answer.d}/${answer.cl}`);
  return { userId, deviceId, clientId };
}

export function levelSnapshot(raw: RawLevels | undefined): LevelSnapshot {
  return { ch: asHash(raw?.ch), u: asHash(raw?.u), d: asHash(raw?.d), c: asHash(raw?.c), n: asHash(raw?.n) };
}

export function snapshot(answer: RawSnapshot): ConnectionSnapshot {
  return {
    conn: asHash(answer.conn),
    client: asHash(answer.client),
    levels: levelSnapshot(answer.levels),
    organizationId: answer.org,
  };
}

export function closedConnection(answer: RawClosed): ClosedConnection {
  return {
    ...rawIds(answer),
    channelId: unesc(answer.ch),
    connectionId: unesc(answer.cn),
    conn: asHash(answer.conn),
    levels: levelSnapshot(answer.levels),
    final: answer.final,
    at: Number(answer.at),
  };
}

export function leftChannel(answer: RawLeft): LeftChannel {
  return {
    ...rawIds(answer),
    channelId: unesc(answer.ch),
    closed: asList<RawClosed>(answer.closed).map(closedConnection),
    deactivated: answer.deactivated,
    at: Number(answer.at),
  };
}

export type RawSession = { client: unknown; channels: unknown } | false;
type RawSessionChannel = { ch: string; claim: string | false; conns: unknown };

export function sessionSnapshot(raw: Exclude<RawSession, false>): SessionSnapshot {
  return {
    client: asHash(raw.client),
    channels: asList<RawSessionChannel>(raw.channels).map((channel) => ({
      channelId: unesc(channel.ch),
      claim: channel.claim || null,
      connections: asList<{ cn: string; levels: RawLevels; state: string | false }>(channel.conns).map(
        (connection) => ({
          connectionId: unesc(connection.cn),
          levels: levelSnapshot(connection.levels),
          state: connection.state || null,
        }),
      ),
    })),
  };
}

export function notFound(what: 'client', client: Partial<ClientIds>): DomainError {
  return new DomainError(
    'NotFound',
    `No ${what} '${client.clientId}' of user '${client.userId}', device '${client.deviceId}' is registered.`,
  );
}

export function notFoundConnection(ref: ConnectionIds): DomainError {
  return new DomainError(
    'NotFound',
    `No connection '${ref.connectionId}' of client '${ref.clientId}' in channel '${ref.channelId}'.`,
  );
}

export function notFoundInChannel(what: string, channelId: string, who: Partial<ClientIds>): DomainError {
  switch (what) {
    case 'channel':
      return new DomainError('NotFound', `Channel '${channelId}' is not active.`);
    case 'user':
      return new DomainError('NotFound', `User '${who.userId}' is not in channel '${channelId}'.`);
    case 'device':
      return new DomainError(
        'NotFound',
        `Device '${who.deviceId}' of user '${who.userId}' is not in channel '${channelId}'.`,
      );
    default:
      return new DomainError('NotFound', `Client '${who.clientId}' is not in channel '${channelId}'.`);
  }
}
