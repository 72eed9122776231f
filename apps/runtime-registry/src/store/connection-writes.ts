import { DomainError, type ChannelClaim } from '@switchboard/contracts';
import { asHash, asList } from '../model/records.js';
import { esc, unesc, type RegistryKeys } from './keys.js';
import {
  closedConnection,
  connIds,
  levelSnapshot,
  notFound,
  notFoundConnection,
  notFoundInChannel,
  partialIds,
  rawIds,
  snapshot,
  type Failure,
  type RawClosed,
  type RawSnapshot,
  type RawTarget,
} from './script-answers.js';
import type {
  ClientIds,
  ConnectionIds,
  ConnectionSnapshot,
  LevelUpdateResult,
  ScriptCall,
  StateResult,
  UnmuteGuard,
  UpdateLevel,
} from './store-types.js';

// The script calls that open, change and close connections and write settings levels (see ScriptCall).

/**
 * Opens a connection; `placement` (sfu/mcu): placed on the least-loaded eligible media server in
 * the same step (its id in the snapshot's `conn.mediaServerId`), Unavailable when there is none.
 */
export function openCall(
  keys: RegistryKeys,
  a: string,
  ref: ConnectionIds,
  type: string,
  fields: Record<string, string>,
  claimFlag: string | null,
  placement: { timeoutMs: number } | null = null,
): ScriptCall<ConnectionSnapshot> {
  return {
    script: 'rtOpen',
    keys: [keys.app(a), keys.servers()],
    args: {
      ...connIds(ref),
      type,
      fields,
      claimFlag: claimFlag ?? undefined,
      place: placement !== null,
      timeoutMs: placement?.timeoutMs,
      app: a,
    },
    result: (raw) => {
      const r = raw as RawSnapshot & Failure;
      if (r.fail === 'unavailable')
        throw new DomainError('Unavailable', `No media server is available for a new ${type} connection.`);
      if (r.fail === 'client') throw notFound('client', ref);
      if (r.fail === 'membership')
        throw new DomainError('NotFound', `Client '${ref.clientId}' has not joined channel '${ref.channelId}'.`);
      if (r.fail === 'claim')
        throw new DomainError(
          'Forbidden',
          `The channel claim of client '${ref.clientId}' does not allow ${type} connections (${r.detail}).`,
        );
      if (r.fail === 'exists') throw new DomainError('Conflict', `Connection '${ref.connectionId}' already exists.`);
      return snapshot(r);
    },
  };
}

/**
 * Moves a connection to a state; its count on its media server (if any) moves along in the same
 * step. `session`: only while that registration of the client holds it (else NotFound).
 */
export function connStateCall(
  keys: RegistryKeys,
  a: string,
  ref: ConnectionIds,
  state: string,
  from: readonly string[],
  terminal: boolean,
  error: string | null,
  session?: string,
): ScriptCall<StateResult> {
  return {
    script: 'rtConnState',
    keys: [keys.app(a), keys.servers()],
    args: {
      ...connIds(ref),
      app: a,
      state,
      from,
      terminal,
      error: error ?? undefined,
      session,
    },
    result: (raw) => {
      const r = raw as RawSnapshot &
        Failure & { same?: boolean; old?: string; closed?: RawClosed | false; at?: string };
      if (r.fail === 'connection') throw notFoundConnection(ref);
      if (r.fail === 'transition')
        throw new DomainError('Conflict', `Connection '${ref.connectionId}' cannot go from ${r.detail} to ${state}.`);
      if (r.same)
        return { same: true, old: state, closed: null, snapshot: null, client: {}, organizationId: '', at: 0 };
      const closed = r.closed ? closedConnection(r.closed) : null;
      return {
        same: false,
        old: r.old ?? null,
        closed,
        snapshot: closed ? null : snapshot(r),
        client: asHash(r.client),
        organizationId: r.org,
        at: closed ? closed.at : Number(r.at),
      };
    },
  };
}

export function levelUpdateCall(
  keys: RegistryKeys,
  a: string,
  level: UpdateLevel,
  ref: { channelId: string } & Partial<ClientIds> & { connectionId?: string },
  set: Record<string, string>,
  lists: Record<string, string>,
  claim: ChannelClaim | null,
): ScriptCall<LevelUpdateResult> {
  return {
    script: 'rtLevelUpdate',
    keys: [keys.app(a)],
    args: {
      level,
      ch: esc(ref.channelId),
      ...partialIds(ref),
      cn: ref.connectionId === undefined ? undefined : esc(ref.connectionId),
      set,
      lists,
      claim: claim ? JSON.stringify(claim) : undefined,
    },
    result: (raw) => {
      const r = raw as Failure & {
        old: unknown;
        seq: number;
        targets: unknown;
        claim: boolean;
        client: unknown;
        org: string;
        at: string;
      };
      if (r.fail) {
        if (r.fail === 'connection') throw notFoundConnection(ref as ConnectionIds);
        throw notFoundInChannel(r.fail, ref.channelId, ref);
      }
      const targets = asList<RawTarget>(r.targets).map((t) => ({
        channelId: ref.channelId,
        ...rawIds(t),
        connectionId: unesc(t.cn),
        conn: asHash(t.conn),
        client: asHash(t.client),
        levels: levelSnapshot(t.levels),
      }));
      return {
        old: asHash(r.old),
        seq: Number(r.seq),
        targets,
        claimChanged: r.claim,
        client: r.client ? asHash(r.client) : null,
        organizationId: r.org,
        at: Number(r.at),
      };
    },
  };
}

/**
 * Writes fields of a connection record. `guard`: the patch unmutes these kinds; while a level could
 * disable that, nothing is written and the answer carries `check` (the settings sequence read) for
 * the caller to decide, then patch again with `seq` set to it (see rtConnPatch in the README).
 */
export function connPatchCall(
  keys: RegistryKeys,
  a: string,
  ref: ConnectionIds,
  set: Record<string, string>,
  del: string[],
  guard?: UnmuteGuard,
): ScriptCall<ConnectionSnapshot & { check?: string }> {
  return {
    script: 'rtConnPatch',
    keys: [keys.app(a)],
    args: { ...connIds(ref), set, del, ...guard },
    result: (raw) => {
      const r = raw as RawSnapshot & Failure & { check?: string };
      if (r.fail) throw notFoundConnection(ref);
      return r.check === undefined ? snapshot(r) : { ...snapshot(r), check: r.check };
    },
  };
}
