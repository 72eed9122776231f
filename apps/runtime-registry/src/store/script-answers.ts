import { DomainError } from '@switchboard/contracts';
import { asHash, asList } from '../model/records.js';
import type { LevelSnapshot } from '../model/settings.js';
import { esc, splitMember, unesc } from './keys.js';
import type { ClientIds, ClosedConnection, ConnectionIds, ConnectionSnapshot, LeftChannel } from './store-types.js';

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

export function ids(c: ClientIds) {
  return { u: esc(c.userId), d: esc(c.deviceId), cl: esc(c.clientId) };
}
export function partialIds(c: Partial<ClientIds>) {
  return {
    u: c.userId === undefined ? undefined : esc(c.userId),
    d: c.deviceId === undefined ? undefined : esc(c.deviceId),
    cl: c.clientId === undefined ? undefined : esc(c.clientId),
  };
}
export function connIds(ref: ConnectionIds) {
  return { ...ids(ref), ch: esc(ref.channelId), cn: esc(ref.connectionId) };
}
export function rawIds(r: { u: string; d: string; cl: string }): ClientIds {
  const [userId = '', deviceId = '', clientId = ''] = splitMember(`${r.u}/${r.d}/${r.cl}`);
  return { userId, deviceId, clientId };
}

export function levelSnapshot(raw: RawLevels | undefined): LevelSnapshot {
  return { ch: asHash(raw?.ch), u: asHash(raw?.u), d: asHash(raw?.d), c: asHash(raw?.c), n: asHash(raw?.n) };
}

export function snapshot(r: RawSnapshot): ConnectionSnapshot {
  return { conn: asHash(r.conn), client: asHash(r.client), levels: levelSnapshot(r.levels), organizationId: r.org };
}

export function closedConnection(r: RawClosed): ClosedConnection {
  return {
    ...rawIds(r),
    channelId: unesc(r.ch),
    connectionId: unesc(r.cn),
    conn: asHash(r.conn),
    levels: levelSnapshot(r.levels),
    final: r.final,
    at: Number(r.at),
  };
}

export function left(r: RawLeft): LeftChannel {
  return {
    ...rawIds(r),
    channelId: unesc(r.ch),
    closed: asList<RawClosed>(r.closed).map(closedConnection),
    deactivated: r.deactivated,
    at: Number(r.at),
  };
}

export function notFound(what: 'client', c: Partial<ClientIds>): DomainError {
  return new DomainError(
    'NotFound',
    `No ${what} '${c.clientId}' of user '${c.userId}', device '${c.deviceId}' is registered.`,
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
