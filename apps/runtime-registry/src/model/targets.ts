/**
 * Which clients a message reaches. A target names a scope (the whole application, a channel, a
 * user, a device or a client, each optionally inside a channel); the registry reads the candidate
 * clients of the narrowest stored set for it (`candidateScope`) and keeps those the target names
 * (`matchesTarget`). A channel-level target reaches members of that channel only; an
 * application-level target (application, user, device, client) reaches registered clients, whether
 * or not they joined a channel.
 */
import type { MessageTarget } from '@switchboard/contracts';

export interface ClientKey {
  userId: string;
  deviceId: string;
  clientId: string;
}

export type CandidateScope =
  | { kind: 'application' }
  | { kind: 'channel'; channelId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'device'; userId: string; deviceId: string }
  | { kind: 'client'; userId: string; deviceId: string; clientId: string };

/** Where the candidates of a target are stored. */
export function candidateScope(target: MessageTarget): CandidateScope {
  switch (target.level) {
    case 'application':
      return { kind: 'application' };
    case 'channel':
    case 'channel.user':
    case 'channel.device':
    case 'channel.client':
      return { kind: 'channel', channelId: target.channelId };
    case 'user':
      return { kind: 'user', userId: target.userId };
    case 'device':
      return { kind: 'device', userId: target.userId, deviceId: target.deviceId };
    case 'client':
      return { kind: 'client', userId: target.userId, deviceId: target.deviceId, clientId: target.clientId };
  }
}

/** Whether a candidate client (already known to be in the target's scope) is named by the target. */
export function matchesTarget(target: MessageTarget, c: ClientKey): boolean {
  switch (target.level) {
    case 'application':
    case 'channel':
      return true;
    case 'user':
    case 'channel.user':
      return c.userId === target.userId;
    case 'device':
    case 'channel.device':
      return c.userId === target.userId && c.deviceId === target.deviceId;
    case 'client':
    case 'channel.client':
      return c.userId === target.userId && c.deviceId === target.deviceId && c.clientId === target.clientId;
  }
}

/** The channel a target lies in, if any (channel message events carry it). */
export function targetChannel(target: MessageTarget): string | null {
  return 'channelId' in target ? target.channelId : null;
}

/**
 * The target of a message a client sends: inside a channel (to everyone, or narrowed to a user,
 * device or client of it), or outside channels to a user, device or client of the application.
 * `null`: the message is for the server only (an event, no delivery).
 */
export function clientMessageTarget(
  applicationId: string,
  channelId: string | null,
  to: { userId?: string; deviceId?: string; clientId?: string } | undefined,
): MessageTarget | null {
  const userId = to?.userId;
  const deviceId = to?.deviceId;
  const clientId = to?.clientId;
  if (channelId !== null) {
    if (userId && deviceId && clientId)
      return { level: 'channel.client', applicationId, channelId, userId, deviceId, clientId };
    if (userId && deviceId) return { level: 'channel.device', applicationId, channelId, userId, deviceId };
    if (userId) return { level: 'channel.user', applicationId, channelId, userId };
    return { level: 'channel', applicationId, channelId };
  }
  if (userId && deviceId && clientId) return { level: 'client', applicationId, userId, deviceId, clientId };
  if (userId && deviceId) return { level: 'device', applicationId, userId, deviceId };
  if (userId) return { level: 'user', applicationId, userId };
  return null;
}
