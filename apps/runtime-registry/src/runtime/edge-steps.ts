import type { ConnectionState, DomainEvent, EdgeReport, MessageBody } from '@switchboard/contracts';
import type { Delivery } from '../events/pusher.js';
import type { ClientRecord } from '../model/records.js';
import type { ClientIds, ConnectionIds, ScriptCall } from '../store/live-store.js';

export type Report<K extends EdgeReport['kind']> = Extract<EdgeReport, { kind: K }>;

/** The events and pushes a change causes. */
export interface Effects {
  events: DomainEvent[];
  deliveries: Delivery[];
}

/** What a report leaves to do once its script ran: its answer, and the events and pushes it causes. */
export interface Done extends Effects {
  answer: unknown;
}

/** A report as its script call and what follows the script (see `EdgeService.together`). */
export interface Step<T> {
  call: ScriptCall<T>;
  finish(result: T): Promise<Done>;
}

/** The reports `EdgeService.together` applies as one script run (each exactly as on its own). */
export const TOGETHER: ReadonlySet<EdgeReport['kind']> = new Set([
  'client.register',
  'client.join',
  'connection.open',
  'connection.state',
]);

/**
 * The connection state machine the client edge enforces (mirrors `CONNECTION_TRANSITIONS` of the
 * edge contract): for each state, the states a connection may come from.
 */
export const ALLOWED_FROM: Record<ConnectionState, readonly ConnectionState[]> = {
  new: [],
  initializing: ['new'],
  connecting: ['initializing'],
  connected: ['connecting'],
  failing: ['new', 'initializing', 'connecting', 'connected'],
  failed: ['failing'],
  closing: ['new', 'initializing', 'connecting', 'connected', 'failing'],
  closed: ['closing'],
};

export const LIVE_STATES: readonly ConnectionState[] = [
  'new',
  'initializing',
  'connecting',
  'connected',
  'failing',
  'closing',
];

/**
 * A report as its journal entry keeps it: without what only its script reads and its events never
 * need (a register's channel claims, the longest part of most reports).
 */
export function forJournal(r: EdgeReport): EdgeReport {
  return r.kind === 'client.register' ? { ...r, claims: [] } : r;
}

export function connectionOfReport(r: { client: ClientIds; channelId: string; connectionId: string }): ConnectionIds {
  return {
    userId: r.client.userId,
    deviceId: r.client.deviceId,
    clientId: r.client.clientId,
    channelId: r.channelId,
    connectionId: r.connectionId,
  };
}

/** The push target of a client of an application. */
export function pushTarget(applicationId: string, c: ClientIds) {
  return { applicationId, userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
}

/** The sender identity of a client's message. */
export function fromClient(c: ClientRecord) {
  return {
    userId: c.userId,
    userAlias: c.userAlias,
    deviceId: c.deviceId,
    deviceAlias: c.deviceAlias,
    clientId: c.clientId,
    clientTag: c.tag,
    clientRoles: [...c.roles],
  };
}

/** The sender identity of an admin message: the identity fields of the message body. */
export function fromBody(m: MessageBody) {
  return {
    userId: m.userId ?? null,
    userAlias: m.userAlias ?? null,
    deviceId: m.deviceId ?? null,
    deviceAlias: m.deviceAlias ?? null,
    clientId: null,
    clientTag: m.clientTag ?? null,
    clientRoles: m.clientRoles ?? null,
  };
}
