import { sameSettings, type EdgeReport, type EdgeSessionState, type ServerPush } from '@switchboard/contracts';
import type { ClientSession } from './client-session.js';

/** What the registry holds for a client and its session does not: removed by reporting it (`registryExtras`). */
export type Removal = Extract<EdgeReport, { kind: 'client.leave' | 'connection.close' }>;

/**
 * The pushes that make the session what the registry holds (null: the client is not registered);
 * the cases are listed in the gateway's README (reconciliation).
 */
export function differences(session: ClientSession, state: EdgeSessionState | null, gatewayId: string): ServerPush[] {
  if (!state) return [{ type: 'unregistered', reason: 'The client is no longer registered.' }];
  if (!readable(state)) throw new Error('gateway.sessions answered an unreadable client');
  // Null: a registration that does not say (nothing taken over that this replica could know of).
  if (
    (state.gatewayId !== null && state.gatewayId !== gatewayId) ||
    (state.sessionId !== null && state.sessionId !== session.sessionId)
  ) {
    return [{ type: 'unregistered', reason: 'The client registered again through another gateway or session.' }];
  }
  const pushes: ServerPush[] = [];
  const channels = new Map(state.channels.map((channel) => [channel.channelId, channel]));
  for (const [channelId, claim] of session.channels) {
    const channel = channels.get(channelId);
    if (!channel) {
      pushes.push({ type: 'kicked', channelId, connectionId: null });
      continue;
    }
    if (!sameJson(channel.claim, claim)) pushes.push({ type: 'claim.updated', channelId, claim: channel.claim });
    const held = new Map(channel.connections.map((c) => [c.connectionId, c]));
    for (const connection of session.connectionsIn(channelId)) {
      const { settings, state: registryState } = held.get(connection.connectionId) ?? {};
      if (!settings) {
        pushes.push({ type: 'kicked', channelId, connectionId: connection.connectionId });
        continue;
      }
      // A lost `connection.state` push (the media moved the state): the client follows the registry.
      if (registryState && connection.settings && registryState !== connection.state)
        pushes.push({
          type: 'connection.state',
          channelId,
          connectionId: connection.connectionId,
          state: registryState,
        });
      // Null: the open is not answered yet (the session is busy then; the next pass sees it).
      if (!connection.settings || sameSettings(settings, connection.settings)) continue;
      // The read's version orders it with the pushes: not applied over a newer push (stale), and a
      // push older than the read that arrives late is stale in turn.
      pushes.push({
        type: 'settings',
        channelId,
        connectionId: connection.connectionId,
        settings,
        version: state.settingsVersion,
      });
    }
  }
  if (
    state.userAlias !== session.userAlias ||
    state.deviceAlias !== session.deviceAlias ||
    state.tag !== session.tag ||
    !sameList(state.roles, session.roles)
  ) {
    pushes.push({
      type: 'client.updated',
      userAlias: state.userAlias,
      deviceAlias: state.deviceAlias,
      tag: state.tag,
      roles: [...state.roles],
    });
  }
  return pushes;
}

/**
 * What the registry holds for the client and the session does not: a channel it is not in (left),
 * a connection it does not have in a channel it is in (closed). Only for a registration that is the
 * session's own (this replica and this session): the reports name the session, so the registry
 * applies them only while it holds the client.
 */
export function registryExtras(session: ClientSession, state: EdgeSessionState, gatewayId: string): Removal[] {
  if (state.gatewayId !== gatewayId || state.sessionId !== session.sessionId) return [];
  const client = session.ref;
  const removals: Removal[] = [];
  for (const channel of state.channels) {
    const { channelId } = channel;
    if (!session.channels.has(channelId)) {
      removals.push({ kind: 'client.leave', client, channelId, sessionId: session.sessionId });
      continue;
    }
    for (const { connectionId } of channel.connections) {
      if (session.connections.get(connectionId)?.channelId !== channelId)
        removals.push({ kind: 'connection.close', client, channelId, connectionId, sessionId: session.sessionId });
    }
  }
  return removals;
}

/** The shape the checks rely on (a registry answering something else fails the session's check). */
function readable(state: EdgeSessionState): boolean {
  return (
    typeof state === 'object' &&
    Array.isArray(state.roles) &&
    typeof state.settingsVersion === 'number' &&
    Array.isArray(state.channels) &&
    state.channels.every(
      (c) =>
        typeof c?.channelId === 'string' &&
        typeof c.claim === 'object' &&
        c.claim !== null &&
        Array.isArray(c.connections) &&
        c.connections.every(
          (connection) =>
            typeof connection?.connectionId === 'string' &&
            typeof connection.settings === 'object' &&
            connection.settings !== null,
        ),
    )
  );
}

/** Equal as JSON values, whatever the order of their keys (a claim travels as JSON both ways). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  const keysOfA = Object.keys(a).filter((key) => (a as Record<string, unknown>)[key] !== undefined);
  const keysOfB = Object.keys(b).filter((key) => (b as Record<string, unknown>)[key] !== undefined);
  return (
    keysOfA.length === keysOfB.length &&
    keysOfA.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
