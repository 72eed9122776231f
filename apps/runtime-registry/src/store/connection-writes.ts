import { DomainError, type ChannelClaim } from '@switchboard/contracts';
import { asHash, asList } from '../model/records.js';
import { esc, unesc, type RegistryKeys } from './keys.js';
import {
  closedConnection,
  escapedConnectionIds,
  levelSnapshot,
  notFound,
  notFoundConnection,
  notFoundInChannel,
  escapedPartialIds,
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
 * Opens a connection; `placement` (sfu/mcu): placed on a media server in the same step (its id in the
 * snapshot's `conn.mediaServerId`): a downstream's (`remoteConnectionId`) on its upstream's, else on
 * the channel's (README, "Media servers (Janus)"); Unavailable when there is none.
 */
export function openCall(
  keys: RegistryKeys,
  applicationId: string,
  ref: ConnectionIds,
  type: string,
  fields: Record<string, string>,
  claimFlag: string | null,
  placement: { timeoutMs: number; remoteConnectionId?: string | null } | null = null,
): ScriptCall<ConnectionSnapshot> {
  const remote = placement?.remoteConnectionId;
  return {
    script: 'rtOpen',
    keys: [keys.app(applicationId), keys.servers()],
    args: {
      ...escapedConnectionIds(ref),
      type,
      fields,
      claimFlag: claimFlag ?? undefined,
      place: placement !== null,
      timeoutMs: placement?.timeoutMs,
      remote: remote ? esc(remote) : undefined,
      app: applicationId,
    },
    result: (raw) => {
      const answer = raw as RawSnapshot & Failure;
      if (answer.fail === 'unavailable')
        throw new DomainError('Unavailable', `No media server is available for a new ${type} connection.`);
      if (answer.fail === 'remote')
        throw new DomainError(
          'ValidationFailed',
          `remoteConnectionId '${remote}' names no open upstream sfu connection in channel '${ref.channelId}'.`,
          [{ field: 'remoteConnectionId', message: 'must name an open upstream sfu connection of the channel' }],
          'remoteConnectionId',
        );
      if (answer.fail === 'client') throw notFound('client', ref);
      if (answer.fail === 'membership')
        throw new DomainError('NotFound', `Client '${ref.clientId}' has not joined channel '${ref.channelId}'.`);
      if (answer.fail === 'claim')
        throw new DomainError(
          'Forbidden',
          `The channel claim of client '${ref.clientId}' does not allow ${type} connections (${answer.detail}).`,
        );
      if (answer.fail === 'exists')
        throw new DomainError('Conflict', `Connection '${ref.connectionId}' already exists.`);
      return snapshot(answer);
    },
  };
}

/**
 * Moves a connection to a state; its count on its media server (if any) moves along in the same
 * step. `session`: only while that registration of the client holds it (else NotFound).
 */
export function connStateCall(
  keys: RegistryKeys,
  applicationId: string,
  ref: ConnectionIds,
  state: string,
  from: readonly string[],
  terminal: boolean,
  error: string | null,
  session?: string,
  only: { mediaServerId?: string; reported?: boolean } = {},
): ScriptCall<StateResult> {
  return {
    script: 'rtConnState',
    keys: [keys.app(applicationId), keys.servers()],
    args: {
      ...escapedConnectionIds(ref),
      app: applicationId,
      state,
      from,
      terminal,
      error: error ?? undefined,
      session,
      server: only.mediaServerId,
      reported: only.reported,
    },
    result: (raw) => {
      const answer = raw as RawSnapshot &
        Failure & { same?: boolean; old?: string; closed?: RawClosed | false; at?: string };
      if (answer.fail === 'connection') throw notFoundConnection(ref);
      if (answer.fail === 'transition')
        throw new DomainError(
          'Conflict',
          `Connection '${ref.connectionId}' cannot go from ${answer.detail} to ${state}.`,
        );
      if (answer.fail === 'media')
        throw new DomainError(
          'Conflict',
          `Connection '${ref.connectionId}' is connected when its media server reports it, not by the client.`,
        );
      if (answer.same)
        return { same: true, old: state, closed: null, snapshot: null, client: {}, organizationId: '', at: 0 };
      const closed = answer.closed ? closedConnection(answer.closed) : null;
      return {
        same: false,
        old: answer.old ?? null,
        closed,
        snapshot: closed ? null : snapshot(answer),
        client: asHash(answer.client),
        organizationId: answer.org,
        at: closed ? closed.at : Number(answer.at),
      };
    },
  };
}

export function levelUpdateCall(
  keys: RegistryKeys,
  applicationId: string,
  level: UpdateLevel,
  ref: { channelId: string } & Partial<ClientIds> & { connectionId?: string },
  set: Record<string, string>,
  lists: Record<string, string>,
  claim: ChannelClaim | null,
): ScriptCall<LevelUpdateResult> {
  return {
    script: 'rtLevelUpdate',
    keys: [keys.app(applicationId)],
    args: {
      level,
      ch: esc(ref.channelId),
      ...escapedPartialIds(ref),
      cn: ref.connectionId === undefined ? undefined : esc(ref.connectionId),
      set,
      lists,
      claim: claim ? JSON.stringify(claim) : undefined,
    },
    result: (raw) => {
      const answer = raw as Failure & {
        old: unknown;
        seq: number;
        targets: unknown;
        claim: boolean;
        client: unknown;
        org: string;
        at: string;
      };
      if (answer.fail) {
        if (answer.fail === 'connection') throw notFoundConnection(ref as ConnectionIds);
        throw notFoundInChannel(answer.fail, ref.channelId, ref);
      }
      const targets = asList<RawTarget>(answer.targets).map((target) => ({
        channelId: ref.channelId,
        ...rawIds(target),
        connectionId: unesc(target.cn),
        conn: asHash(target.conn),
        client: asHash(target.client),
        levels: levelSnapshot(target.levels),
      }));
      return {
        old: asHash(answer.old),
        seq: Number(answer.seq),
        targets,
        claimChanged: answer.claim,
        client: answer.client ? asHash(answer.client) : null,
        organizationId: answer.org,
        at: Number(answer.at),
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
  applicationId: string,
  ref: ConnectionIds,
  set: Record<string, string>,
  del: string[],
  guard?: UnmuteGuard,
): ScriptCall<ConnectionSnapshot & { check?: string }> {
  return {
    script: 'rtConnPatch',
    keys: [keys.app(applicationId)],
    args: { ...escapedConnectionIds(ref), set, del, ...guard },
    result: (raw) => {
      const answer = raw as RawSnapshot & Failure & { check?: string };
      if (answer.fail) throw notFoundConnection(ref);
      return answer.check === undefined ? snapshot(answer) : { ...snapshot(answer), check: answer.check };
    },
  };
}
