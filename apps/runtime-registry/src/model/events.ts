/**
 * Domain events, shaped as the webhook `EventInfo` plus their owner (`DomainEvent`); parts an event is
 * not about are null. What each event carries, its timestamp and origin: README, "What events carry".
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
import type { MediaDomainEvent, MediaEventContext } from '../media/media-control-context.js';

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
  /** Beside the EventInfo of connection events on a media server: what the media control needs. */
  media?: MediaEventContext | null;
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
  const domain: RecordingDomainEvent & MediaDomainEvent = {
    event,
    applicationId,
    organizationId: owner.organizationId,
  };
  if (parts.recording) domain.recording = parts.recording;
  if (parts.media) domain.media = parts.media;
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
