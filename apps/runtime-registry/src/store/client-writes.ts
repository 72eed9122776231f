import type { ChannelClaim } from '@switchboard/contracts';
import { asHash, asList } from '../model/records.js';
import { esc, gatewayMember, unesc, type RegistryKeys } from './keys.js';
import {
  escapedIds,
  leftChannel,
  levelSnapshot,
  notFound,
  notFoundInChannel,
  escapedPartialIds,
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
  applicationId: string,
  client: ClientIds & {
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
    keys: [keys.app(applicationId), keys.gatewayClients(gatewayId)],
    args: {
      ...escapedIds(client),
      app: applicationId,
      org: organizationId,
      gw: gatewayId,
      gwMember: gatewayMember(applicationId, client),
      userAlias: client.userAlias,
      deviceAlias: client.deviceAlias,
      tag: client.tag,
      roles: JSON.stringify(client.roles),
      protocol: client.protocol,
      claims: JSON.stringify(claims),
      sessionId,
    },
    result: (raw) => {
      const answer = raw as {
        new: boolean;
        prevGatewayId: string | false;
        client: unknown;
        replaced: false | { client: unknown; lefts: unknown };
        index?: IndexTransition;
        at: string;
      };
      return {
        created: answer.new,
        previousGatewayId: answer.prevGatewayId || null,
        client: asHash(answer.client),
        replaced: answer.replaced
          ? { client: asHash(answer.replaced.client), lefts: asList<RawLeft>(answer.replaced.lefts).map(leftChannel) }
          : null,
        index: answer.index ?? null,
        at: Number(answer.at),
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
  applicationId: string,
  client: ClientIds,
  idleTtlMs: number,
  onlyIfGateway?: string,
  onlyIfSession?: string,
): ScriptCall<UnregisterResult | null> {
  return {
    script: 'rtUnregister',
    keys: [keys.app(applicationId), keys.servers()],
    args: { ...escapedIds(client), app: applicationId, gw: onlyIfGateway, session: onlyIfSession, idleTtlMs },
    result: (raw) => {
      const answer = raw as Failure & {
        client: unknown;
        lefts: unknown;
        index?: IndexTransition;
        org: string;
        at: string;
      };
      if (answer.fail) return null;
      return {
        client: asHash(answer.client),
        lefts: asList<RawLeft>(answer.lefts).map(leftChannel),
        index: answer.index ?? null,
        organizationId: answer.org,
        at: Number(answer.at),
      };
    },
  };
}

/** Joins a channel; `recordingEnabled`: the channel config's default, kept when this join activates the channel. */
export function joinCall(
  keys: RegistryKeys,
  applicationId: string,
  client: ClientIds,
  channelId: string,
  claim: ChannelClaim,
  recordingEnabled: boolean | null = null,
): ScriptCall<JoinResult> {
  return {
    script: 'rtJoin',
    keys: [keys.app(applicationId)],
    args: {
      ...escapedIds(client),
      ch: esc(channelId),
      claim: JSON.stringify(claim),
      rec: recordingEnabled === null ? undefined : recordingEnabled ? '1' : '0',
    },
    result: (raw) => {
      const answer = raw as Failure & {
        already: boolean;
        activated: boolean;
        client: unknown;
        counts: number[];
        levels: RawLevels;
        org: string;
        at: string;
      };
      if (answer.fail) throw notFound('client', client);
      const counts = asList<number>(answer.counts);
      return {
        already: answer.already,
        activated: answer.activated,
        client: asHash(answer.client),
        counts: [counts[0] ?? 0, counts[1] ?? 0, counts[2] ?? 0, counts[3] ?? 0],
        levels: levelSnapshot(answer.levels),
        organizationId: answer.org,
        at: Number(answer.at),
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
  applicationId: string,
  channelId: string,
  level: RemoveLevel,
  who: Partial<ClientIds>,
  session?: string,
): ScriptCall<RemoveResult> {
  return {
    script: 'rtRemoveMembers',
    keys: [keys.app(applicationId), keys.servers()],
    args: { app: applicationId, ch: esc(channelId), level, ...escapedPartialIds(who), session },
    result: (raw) => {
      const answer = raw as Failure & { lefts: unknown; clients: unknown; org: string };
      if (answer.fail) throw notFoundInChannel(answer.fail, channelId, who);
      const clients = new Map<string, Hash>();
      for (const [member, hash] of Object.entries(asHash(answer.clients) as unknown as Record<string, unknown>))
        clients.set(member, asHash(hash));
      return { lefts: asList<RawLeft>(answer.lefts).map(leftChannel), clients, organizationId: answer.org };
    },
  };
}

/** Changes a client's aliases, tag or roles; NotFound when it is not registered. */
export function clientPatchCall(
  keys: RegistryKeys,
  applicationId: string,
  client: ClientIds,
  set: Record<string, string>,
  del: string[],
): ScriptCall<{ client: Hash; channels: string[]; organizationId: string }> {
  return {
    script: 'rtClientPatch',
    keys: [keys.app(applicationId)],
    args: { ...escapedIds(client), set, del },
    result: (raw) => {
      const answer = raw as Failure & { client: unknown; channels: unknown; org: string };
      if (answer.fail) throw notFound('client', client);
      return {
        client: asHash(answer.client),
        channels: asList<string>(answer.channels).map(unesc),
        organizationId: answer.org,
      };
    },
  };
}
