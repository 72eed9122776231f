import type { ClientRef, ConnectionRef } from '@switchboard/contracts';
import type { LevelHash, LevelSnapshot } from '../model/settings.js';
import type { AppScript } from './scripts.js';

type Hash = Record<string, string>;

/** A client's ids below its application (the contracts' id chain): the store takes the application id apart. */
export type ClientIds = Omit<ClientRef, 'applicationId'>;
/** A connection's ids below its application (the contracts' id chain). */
export type ConnectionIds = Omit<ConnectionRef, 'applicationId'>;

export interface IndexTransition {
  gen: string;
  state: 0 | 1;
  org: string;
}

/** A connection as it was when it left the live model. */
export interface ClosedConnection extends ConnectionIds {
  conn: Hash;
  levels: LevelSnapshot;
  final: string;
  at: number;
}

/** A client leaving a channel (kick, leave, unregister). */
export interface LeftChannel extends ClientIds {
  channelId: string;
  closed: ClosedConnection[];
  deactivated: boolean;
  at: number;
}

export interface RegisterResult {
  created: boolean;
  previousGatewayId: string | null;
  client: Hash;
  /** The registration of another session this one replaced: its client hash, and the channels it left. */
  replaced: { client: Hash; lefts: LeftChannel[] } | null;
  index: IndexTransition | null;
  /** When the change happened (the script's Redis clock, Unix ms): the timestamp of its events. */
  at: number;
}
export interface UnregisterResult {
  client: Hash;
  lefts: LeftChannel[];
  index: IndexTransition | null;
  organizationId: string;
  /** When the change happened (the script's Redis clock; its lefts carry the same): the timestamp of its events. */
  at: number;
}
export interface JoinResult {
  already: boolean;
  activated: boolean;
  client: Hash;
  counts: [number, number, number, number];
  levels: LevelSnapshot;
  organizationId: string;
  /** When the change happened (the script's Redis clock): the timestamp of its events. */
  at: number;
}
export interface RemoveResult {
  lefts: LeftChannel[];
  /** Client hashes of the removed members, by member (`u/d/cl` escaped). */
  clients: Map<string, Hash>;
  organizationId: string;
}
/** A connection patch that unmutes `unmute`; `seq`: the settings sequence its check read. */
export interface UnmuteGuard {
  unmute: Array<'audio' | 'video'>;
  seq?: string;
}
export interface ConnectionSnapshot {
  conn: Hash;
  client: Hash;
  levels: LevelSnapshot;
  organizationId: string;
}
export interface StateResult {
  same: boolean;
  old: string | null;
  /** Set when the state was terminal: the connection left the live model. */
  closed: ClosedConnection | null;
  snapshot: ConnectionSnapshot | null;
  client: Hash;
  organizationId: string;
  /** When the state changed (the script's Redis clock; `closed.at` for a terminal state); 0 when `same`. */
  at: number;
}
export interface LevelTarget extends ConnectionIds {
  conn: Hash;
  client: Hash;
  levels: LevelSnapshot;
}
export interface LevelUpdateResult {
  old: LevelHash;
  /** The application's settings sequence number of this write (orders settings pushes). */
  seq: number;
  targets: LevelTarget[];
  claimChanged: boolean;
  client: Hash | null;
  organizationId: string;
  /** When the write happened (the script's Redis clock): the timestamp of the events it causes. */
  at: number;
}

/** A registered client as `sessions` reads it. */
export interface SessionSnapshot {
  client: Hash;
  /** Its channels: the claim (JSON text; null if unreadable), its connections with their settings levels and states. */
  channels: Array<{
    channelId: string;
    claim: string | null;
    connections: Array<{ connectionId: string; levels: LevelSnapshot; state: string | null }>;
  }>;
}

export type RemoveLevel = 'channel' | 'user' | 'device' | 'client';
export type UpdateLevel = 'channel' | 'user' | 'device' | 'client' | 'connection';

/**
 * One run of an app script, described (`LiveStore.*Call`) rather than run: `LiveStore.sequence`
 * runs several of one application in one round trip. `result` reads its answer as the method of
 * the same name does (throwing its DomainErrors).
 */
export interface ScriptCall<T> {
  script: AppScript;
  /** The application's base key, and the script's second key if it has one. */
  keys: [string] | [string, string];
  args: unknown;
  result(raw: unknown): T;
}

/**
 * An entry of the operation journal (events/journal.ts): a script run given one records, in the same
 * atomic run as its change, `context` (a JSON text) and its answer under `id`.
 */
export interface JournalEntry {
  id: string;
  context: string;
}

/** The outcome of one call of `LiveStore.sequence`. */
export type CallOutcome<T> = { ok: T } | { error: unknown };
