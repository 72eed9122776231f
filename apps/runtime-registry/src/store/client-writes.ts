import type { ChannelClaim } from '@switchboard/contracts';
import { asHash, asList } from '../model/records.js';
import { esc, gatewayMember, unesc, type RegistryKeys } from './keys.js';
import {
  ids,
  left,
  levelSnapshot,
  notFound,
  notFoundInChannel,
  partialIds,
  type Failure,
  type Hash,
  type RawLeft,
  type RawLevels,
} from './script-answers.js';
import type {
  ClientIds,
  IndexTransition,
  JoinResult,
  RegisterResult,
  RemoveLevel,
  RemoveResult,
  ScriptCall,
  UnregisterResult,
} from './store-types.js';

// The script calls that register clients, change them and their channel memberships (see ScriptCall).

/** Registers a client (run it with `call`, or in a `sequence`). */
export function registerCall(
  keys: RegistryKeys,
  a: string,
  c: ClientIds & {
    userAlias: string | null;
    deviceAlias: string | null;
    tag: string | null;
    roles: string[];
    protocol: string;
  },
  organizationId: string,
  gatewayId: string,
  claims: ChannelClaim[],
  sessionId?: string,
): ScriptCall<RegisterResult> {
  return {
    script: 'rtRegister',
    keys: [keys.app(a), keys.gatewayClients(gatewayId)],
    args: {
      ...ids(c),
      app: a,
      org: organizationId,
      gw: gatewayId,
      gwMember: gatewayMember(a, c),
      userAlias: c.userAlias,
      deviceAlias: c.deviceAlias,
      tag: c.tag,
      roles: JSON.stringify(c.roles),
      protocol: c.protocol,
      claims: JSON.stringify(claims),
      sessionId,
    },
    result: (raw) => {
      const r = raw as {
        new: boolean;
        prevGatewayId: string | false;
        client: unknown;
        replaced: false | { client: unknown; lefts: unknown };
        index?: IndexTransition;
        at: string;
      };
      return {
        created: r.new,
        previousGatewayId: r.prevGatewayId || null,
        client: asHash(r.client),
        replaced: r.replaced
          ? { client: asHash(r.replaced.client), lefts: asList<RawLeft>(r.replaced.lefts).map(left) }
          : null,
        index: r.index ?? null,
        at: Number(r.at),
      };
    },
  };
}

/**
 * Unregisters a client; `onlyIfGateway` / `onlyIfSession`: only while that gateway (and that
 * registration of it) still holds it. Null when it was not registered (or is held by another).
 * The counts of its connections on their media servers are freed in the same step.
 */
export function unregisterCall(
  keys: RegistryKeys,
  a: string,
  c: ClientIds,
  idleTtlMs: number,
  onlyIfGateway?: string,
  onlyIfSession?: string,
): ScriptCall<UnregisterResult | null> {
  return {
    script: 'rtUnregister',
    keys: [keys.app(a), keys.servers()],
    args: { ...ids(c), app: a, gw: onlyIfGateway, session: onlyIfSession, idleTtlMs },
    result: (raw) => {
      const r = raw as Failure & {
        client: unknown;
        lefts: unknown;
        index?: IndexTransition;
        org: string;
        at: string;
      };
      if (r.fail) return null;
      return {
        client: asHash(r.client),
        lefts: asList<RawLeft>(r.lefts).map(left),
        index: r.index ?? null,
        organizationId: r.org,
        at: Number(r.at),
      };
    },
  };
}

/** Joins a channel; `recordingEnabled`: the channel config's default, kept when this join activates the channel. */
export function joinCall(
  keys: RegistryKeys,
  a: string,
  c: ClientIds,
  channelId: string,
  claim: ChannelClaim,
  recordingEnabled: boolean | null = null,
): ScriptCall<JoinResult> {
  return {
    script: 'rtJoin',
    keys: [keys.app(a)],
    args: {
      ...ids(c),
      ch: esc(channelId),
      claim: JSON.stringify(claim),
      rec: recordingEnabled === null ? undefined : recordingEnabled ? '1' : '0',
    },
    result: (raw) => {
      const r = raw as Failure & {
        already: boolean;
        activated: boolean;
        client: unknown;
        counts: number[];
        levels: RawLevels;
        org: string;
        at: string;
      };
      if (r.fail) throw notFound('client', c);
      const counts = asList<number>(r.counts);
      return {
        already: r.already,
        activated: r.activated,
        client: asHash(r.client),
        counts: [counts[0] ?? 0, counts[1] ?? 0, counts[2] ?? 0, counts[3] ?? 0],
        levels: levelSnapshot(r.levels),
        organizationId: r.org,
        at: Number(r.at),
      };
    },
  };
}

/**
 * Removes members of a channel (kicks, a leave); the counts of their connections on their media servers are freed in
 * the same step.
 */
/** `session` (level client): only while that registration of the client holds it (else NotFound). */
export function removeMembersCall(
  keys: RegistryKeys,
  a: string,
  channelId: string,
  level: RemoveLevel,
  who: Partial<ClientIds>,
  session?: string,
): ScriptCall<RemoveResult> {
  return {
    script: 'rtRemoveMembers',
    keys: [keys.app(a), keys.servers()],
    args: { app: a, ch: esc(channelId), level, ...partialIds(who), session },
    result: (raw) => {
      const r = raw as Failure & { lefts: unknown; clients: unknown; org: string };
      if (r.fail) throw notFoundInChannel(r.fail, channelId, who);
      const clients = new Map<string, Hash>();
      for (const [member, hash] of Object.entries(asHash(r.clients) as unknown as Record<string, unknown>))
        clients.set(member, asHash(hash));
      return { lefts: asList<RawLeft>(r.lefts).map(left), clients, organizationId: r.org };
    },
  };
}

/** Changes a client's aliases, tag or roles; NotFound when it is not registered. */
export function clientPatchCall(
  keys: RegistryKeys,
  a: string,
  c: ClientIds,
  set: Record<string, string>,
  del: string[],
): ScriptCall<{ client: Hash; channels: string[]; organizationId: string }> {
  return {
    script: 'rtClientPatch',
    keys: [keys.app(a)],
    args: { ...ids(c), set, del },
    result: (raw) => {
      const r = raw as Failure & { client: unknown; channels: unknown; org: string };
      if (r.fail) throw notFound('client', c);
      return { client: asHash(r.client), channels: asList<string>(r.channels).map(unesc), organizationId: r.org };
    },
  };
}
