import type { ConnectionInfo, DomainEvent, MediaStats, WebhookEventName } from '@switchboard/contracts';
import { mediaContext } from '../media/media-control-context.js';
import { connectionStateEvent, domainEvent, type EventCause, type EventOwner } from '../model/events.js';
import { clientRecord, connectionInfo, storedConnection, type ClientRecord } from '../model/records.js';
import { effectiveSettings, type LevelSnapshot } from '../model/settings.js';
import type { ClosedConnection, LeftChannel } from '../store/live-store.js';

export const CLIENT_CAUSE: EventCause = { origin: 'client', forced: false };
export const API_CAUSE: EventCause = { origin: 'api', forced: true };
export const SERVER_CAUSE: EventCause = { origin: 'server', forced: true };

type Hash = Record<string, string>;

/** A client's record from its stored registration (only its ids are taken from `ids`). */
export function clientOf(
  ids: { userId: string; deviceId: string; clientId: string },
  registration: Hash,
): ClientRecord {
  return clientRecord({ userId: ids.userId, deviceId: ids.deviceId, clientId: ids.clientId }, registration);
}

/** A stored connection with its client and settings levels, as the live model reads it. */
export interface ConnectionSource {
  channelId: string;
  connectionId: string;
  client: ClientRecord;
  conn: Hash;
  levels: LevelSnapshot;
  /** Overrides the stored state (a connection that just left the live model). */
  state?: string;
}

/** A connection's info and effective settings. */
export function resolveConnection(applicationId: string, source: ConnectionSource) {
  const stored = storedConnection(source.conn);
  if (source.state) stored.state = source.state as typeof stored.state;
  const { client, channelId, connectionId } = source;
  const settings = effectiveSettings(source.levels, {
    userId: client.userId,
    deviceId: client.deviceId,
    clientId: client.clientId,
    connectionId,
  });
  return {
    info: connectionInfo({ applicationId, channelId, connectionId, client, conn: stored, settings }),
    settings,
  };
}

export function connectionInfoOf(applicationId: string, source: ConnectionSource): ConnectionInfo {
  return resolveConnection(applicationId, source).info;
}

/**
 * The event of a connection change: its info (as read from the store), and beside it the
 * recording context (client protocol, effective recording mode) the recording service reads.
 */
export function connectionEvent(
  owner: EventOwner,
  type: WebhookEventName,
  cause: EventCause,
  source: ConnectionSource & { stats?: MediaStats; at?: number },
): DomainEvent {
  const { info, settings } = resolveConnection(owner.applicationId, source);
  const part = {
    channelId: source.channelId,
    client: source.client,
    connection: info,
    connectionStats: source.stats ?? null,
    recording: { clientProtocol: info.clientProtocol, recordingMode: settings.recordingMode },
    // Only kicks of interface A close connections with the api origin.
    media: mediaContext(
      storedConnection(source.conn),
      settings,
      type === 'connection.closed' && cause.origin === 'api',
    ),
  };
  return domainEvent(owner, type, cause, part, source.at);
}

/** The event of a connection that left the live model (its media server counts moved in the same script). */
export function closedConnectionEvents(
  owner: EventOwner,
  closed: ClosedConnection,
  client: ClientRecord,
  cause: EventCause,
): DomainEvent[] {
  const type = connectionStateEvent(closed.final);
  if (!type) return [];
  return [connectionEvent(owner, type, cause, { ...closed, client, state: closed.final, at: closed.at })];
}

/** The events of a client leaving a channel (its connections closed first). */
export function leftChannelEvents(
  owner: EventOwner,
  left: LeftChannel,
  client: ClientRecord,
  cause: EventCause,
): DomainEvent[] {
  const events = left.closed.flatMap((closed) => closedConnectionEvents(owner, closed, client, cause));
  const part = { channelId: left.channelId, client };
  events.push(domainEvent(owner, 'channel.client.left', cause, part, left.at));
  if (left.deactivated) events.push(domainEvent(owner, 'channel.deactivated', cause, part, left.at));
  return events;
}
