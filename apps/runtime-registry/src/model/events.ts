/**
 * Domain events, shaped as the webhook `EventInfo` (libs/contracts/src/webhooks) plus their owner
 * (`DomainEvent`). Parts an event is not about are null. Decisions on what each event carries:
 * - channel.activated / deactivated: channel, and the client whose join/leave caused it;
 * - channel.client.joined / left: channel and client;
 * - channel.client.message: channel, the sending client, message; channel.server.message: channel
 *   and message, plus the recipient client for a channel.client target (one event per command, not
 *   per recipient);
 * - client.registered / unregistered / updated / message / stats: client (stats for client.stats);
 *   client.message without a channel; server.message: message, plus the recipient client for a
 *   client-level target (a user or device target is not named: EventInfo has no part for it);
 * - connection.<state> / updated / stats: channel, client, connection (stats for connection.stats),
 *   and beside the EventInfo the recording context (`recording`: the client protocol and the
 *   connection's effective `recordingMode`, see RecordingDomainEvent).
 * `timestamp`: when it happened; every event of one operation carries the same one (the time of the
 * Redis script that applied the change, where there is one), so a `batch: true` webhook gets them
 * in one call.
 * `origin`: `client` (reported by the client edge), `api` (an interface A/B call), `server` (the
 * registry itself, e.g. the clients of a gateway that is gone). `forced`: kicks, admin changes and
 * drops.
 */
import { randomUUID } from 'node:crypto';
import type {
  ConnectionInfo,
  DomainEvent,
  EventInfo,
  MessageBody,
  RecordingDomainEvent,
  RecordingEventContext,
  WebhookEventMessage,
  WebhookEventName,
} from '@switchboard/contracts';
import { clientPart, connectionPart, type ClientRecord } from './records.js';
import type { MediaStats } from '@switchboard/contracts';

export type EventOrigin = 'client' | 'server' | 'api';

export interface EventOwner {
  applicationId: string;
  organizationId: string;
}

export interface EventCause {
  origin: EventOrigin;
  forced: boolean;
}

export interface EventParts {
  channelId?: string | null;
  client?: ClientRecord | null;
  clientStats?: MediaStats | null;
  connection?: ConnectionInfo | null;
  connectionStats?: MediaStats | null;
  message?: WebhookEventMessage | null;
  /** Beside the EventInfo of connection events: what the recording side needs that the webhook part lacks. */
  recording?: RecordingEventContext | null;
}

export function domainEvent(
  owner: EventOwner,
  type: WebhookEventName,
  cause: EventCause,
  parts: EventParts,
  timestamp = Date.now(),
): DomainEvent {
  const { applicationId } = owner;
  const event: EventInfo = {
    id: randomUUID(),
    timestamp: Math.round(timestamp),
    origin: cause.origin,
    type,
    forced: cause.forced,
    channel: parts.channelId ? { id: parts.channelId, applicationId, channelRecording: null } : null,
    client: parts.client ? clientPart(applicationId, parts.client, parts.clientStats ?? null) : null,
    connection: parts.connection ? connectionPart(parts.connection, parts.connectionStats ?? null) : null,
    message: parts.message ?? null,
  };
  const domain: RecordingDomainEvent = { event, applicationId, organizationId: owner.organizationId };
  if (parts.recording) domain.recording = parts.recording;
  return domain;
}

/** The message part: the text and the sender identity (every field present). */
export function messagePart(message: MessageBody, sender?: ClientRecord | null): WebhookEventMessage {
  if (sender) {
    return {
      message: message.message ?? null,
      clientTag: sender.tag,
      clientRoles: [...sender.roles],
      deviceId: sender.deviceId,
      deviceAlias: sender.deviceAlias,
      userId: sender.userId,
      userAlias: sender.userAlias,
    };
  }
  return {
    message: message.message ?? null,
    clientTag: message.clientTag ?? null,
    clientRoles: message.clientRoles ?? null,
    deviceId: message.deviceId ?? null,
    deviceAlias: message.deviceAlias ?? null,
    userId: message.userId ?? null,
    userAlias: message.userAlias ?? null,
  };
}

/** The event of a connection reaching a state (`new` has none: the connection was just opened). */
export function connectionStateEvent(state: string): WebhookEventName | null {
  switch (state) {
    case 'initializing':
    case 'connecting':
    case 'connected':
    case 'failing':
    case 'failed':
    case 'closing':
    case 'closed':
      return `connection.${state}` as WebhookEventName;
    default:
      return null;
  }
}
