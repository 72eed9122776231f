/**
 * Turns one domain event into what the usage ledger needs to know (pure; see
 * libs/contracts/src/messaging/usage.ts for the rules). Events are read defensively: the stream
 * is a boundary, so a malformed event is reported as `invalid` instead of throwing.
 */
import { USAGE_MAX_TIMESTAMP } from '@switchboard/contracts';

/** The identity of a connection (its interface A path without the channel-independent parts). */
export interface ConnectionKey {
  applicationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
}

interface Owner {
  eventId: string;
  organizationId: string;
  applicationId: string;
}

export type UsageFact =
  | (Owner & {
      kind: 'connection';
      connection: ConnectionKey;
      connectedAt?: number;
      endedAt?: number;
      maxPixelCount?: number;
    })
  | (Owner & {
      kind: 'client-ended';
      userId: string;
      deviceId: string;
      clientId: string;
      channelId: string | null;
      at: number;
    })
  | (Owner & { kind: 'message'; at: number })
  | { kind: 'ignored'; eventId: string | null; reason: string }
  | { kind: 'invalid'; eventId: string | null; reason: string };

export type ConnectionFact = Extract<UsageFact, { kind: 'connection' }>;
export type ClientEndedFact = Extract<UsageFact, { kind: 'client-ended' }>;
export type MessageFact = Extract<UsageFact, { kind: 'message' }>;

type JsonObject = Record<string, unknown>;

function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: unknown, max = 256): string | undefined {
  return typeof v === 'string' && v.length > 0 && v.length <= max ? v : undefined;
}

function pixelCount(width: unknown, height: unknown): number | undefined {
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height)) return undefined;
  const w = width as number;
  const h = height as number;
  if (w < 0 || h < 0) return undefined;
  const n = w * h;
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The largest frame size (width * height) a connection part reports: its stats sample, and the
 * stream descriptions of a full interface A connection info when present. Undefined when none.
 */
export function pixelCountOf(connection: unknown): number | undefined {
  if (!isJsonObject(connection)) return undefined;
  const found: number[] = [];
  const push = (n: number | undefined) => {
    if (n !== undefined) found.push(n);
  };
  if (isJsonObject(connection.stats)) push(pixelCount(connection.stats.frameWidth, connection.stats.frameHeight));
  if (isJsonObject(connection.videoStream))
    push(pixelCount(connection.videoStream.width, connection.videoStream.height));
  if (Array.isArray(connection.videoStreams)) {
    for (const s of connection.videoStreams) if (isJsonObject(s)) push(pixelCount(s.width, s.height));
  }
  return found.length > 0 ? Math.max(...found) : undefined;
}

function connectionKey(applicationId: string, c: JsonObject): ConnectionKey | undefined {
  const channelId = text(c.channelId);
  const userId = text(c.userId);
  const deviceId = text(c.deviceId);
  const clientId = text(c.clientId);
  const connectionId = text(c.id);
  if (!channelId || !userId || !deviceId || !clientId || !connectionId) return undefined;
  return { applicationId, channelId, userId, deviceId, clientId, connectionId };
}

/** Reads a `DomainEvent` (`{ event: EventInfo, applicationId, organizationId }`). */
export function readUsageEvent(value: unknown): UsageFact {
  if (!isJsonObject(value) || !isJsonObject(value.event))
    return { kind: 'invalid', eventId: null, reason: 'not a domain event' };
  const event = value.event;
  const eventId = text(event.id);
  if (!eventId) return { kind: 'invalid', eventId: null, reason: 'the event has no usable id' };
  const type = typeof event.type === 'string' ? event.type : undefined;
  if (!type) return { kind: 'invalid', eventId, reason: 'the event has no type' };
  const applicationId = text(value.applicationId);
  const organizationId = text(value.organizationId);
  const at = event.timestamp;
  const usable = (): string | undefined => {
    if (!applicationId) return 'applicationId is missing';
    if (!organizationId) return 'organizationId is missing';
    if (!Number.isSafeInteger(at) || (at as number) < 0 || (at as number) > USAGE_MAX_TIMESTAMP)
      return 'timestamp is not a Unix millisecond time';
    return undefined;
  };
  const owner = () => ({ eventId, organizationId: organizationId!, applicationId: applicationId! });

  switch (type) {
    case 'connection.connected':
    case 'connection.updated':
    case 'connection.stats':
    case 'connection.closed':
    case 'connection.failed': {
      const problem = usable();
      if (problem) return { kind: 'invalid', eventId, reason: problem };
      if (!isJsonObject(event.connection))
        return { kind: 'invalid', eventId, reason: `${type} without a connection part` };
      const connection = connectionKey(applicationId!, event.connection);
      if (!connection) return { kind: 'invalid', eventId, reason: `${type}: the connection part lacks its ids` };
      const maxPixelCount = pixelCountOf(event.connection);
      const fact: ConnectionFact = { ...owner(), kind: 'connection', connection };
      if (maxPixelCount !== undefined) fact.maxPixelCount = maxPixelCount;
      if (type === 'connection.connected') fact.connectedAt = at as number;
      else if (type === 'connection.closed' || type === 'connection.failed') fact.endedAt = at as number;
      else if (maxPixelCount === undefined) return { kind: 'ignored', eventId, reason: `${type} without a frame size` };
      return fact;
    }
    case 'channel.client.left':
    case 'client.unregistered': {
      const problem = usable();
      if (problem) return { kind: 'invalid', eventId, reason: problem };
      const client = isJsonObject(event.client) ? event.client : undefined;
      const clientId = text(client?.id);
      const userId = text(client?.userId);
      const deviceId = text(client?.deviceId);
      if (!clientId || !userId || !deviceId)
        return { kind: 'invalid', eventId, reason: `${type} without the client's ids` };
      let channelId: string | null = null;
      if (type === 'channel.client.left') {
        channelId = text(isJsonObject(event.channel) ? event.channel.id : undefined) ?? null;
        if (!channelId) return { kind: 'invalid', eventId, reason: `${type} without a channel` };
      }
      return { ...owner(), kind: 'client-ended', userId, deviceId, clientId, channelId, at: at as number };
    }
    case 'channel.client.message':
    case 'client.message': {
      const problem = usable();
      if (problem) return { kind: 'invalid', eventId, reason: problem };
      return { ...owner(), kind: 'message', at: at as number };
    }
    default:
      return { kind: 'ignored', eventId, reason: `${type} does not count for usage` };
  }
}
