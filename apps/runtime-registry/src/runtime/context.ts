/**
 * Shared plumbing of the runtime services: tenancy, turning store answers into records, events of
 * closed connections and departures. (The media server counts of connection lifecycles move in the
 * store's scripts, with the change they go with.)
 */
import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  type CallerScope,
  type ConnectionInfo,
  type DomainEvent,
  type MediaStats,
  type WebhookEventName,
} from '@switchboard/contracts';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { EventPublisher, EventsParked } from '../events/event-publisher.js';
import { OperationJournal, stampEvents } from '../events/journal.js';
import { Pusher, type Delivery } from '../events/pusher.js';
import { domainEvent, connectionStateEvent, type EventCause, type EventOwner } from '../model/events.js';
import { clientRecord, connectionInfo, storedConnection, type ClientRecord } from '../model/records.js';
import { effectiveSettings, type LevelSnapshot } from '../model/settings.js';
import {
  LiveStore,
  type ClientIds,
  type ClosedConnection,
  type IndexTransition,
  type JournalEntry,
  type LeftChannel,
} from '../store/live-store.js';
import { ServersStore } from '../store/servers-store.js';

export const CLIENT_CAUSE: EventCause = { origin: 'client', forced: false };
export const API_CAUSE: EventCause = { origin: 'api', forced: true };
export const SERVER_CAUSE: EventCause = { origin: 'server', forced: true };

@Injectable()
export class RuntimeContext {
  constructor(
    readonly store: LiveStore,
    readonly servers: ServersStore,
    readonly events: EventPublisher,
    readonly journal: OperationJournal,
    readonly pusher: Pusher,
    readonly logger: JsonLogger,
    @Inject(SERVICE_CONFIG) readonly config: RegistryConfig,
  ) {}

  /**
   * Tenancy: the application must be in use, and belong to the caller's organization unless the
   * caller is an operator. Another organization's application answers exactly like a missing one.
   */
  async authorize(scope: CallerScope, applicationId: string): Promise<EventOwner> {
    return this.checkOwner(scope, applicationId, await this.store.appOwner(applicationId));
  }

  checkOwner(
    scope: CallerScope,
    applicationId: string,
    owner: { organizationId: string | null; inUse: boolean },
  ): EventOwner {
    if (
      !owner.inUse ||
      owner.organizationId === null ||
      (!scope.operator && owner.organizationId !== scope.organizationId)
    ) {
      throw new DomainError('NotFound', `No application '${applicationId}' is in use.`);
    }
    return { applicationId, organizationId: owner.organizationId };
  }

  requireOperator(scope: CallerScope): void {
    if (!scope.operator) throw new DomainError('Forbidden', 'This operation needs an operator credential.');
  }

  client(ids: ClientIds, hash: Record<string, string>): ClientRecord {
    return clientRecord({ userId: ids.userId, deviceId: ids.deviceId, clientId: ids.clientId }, hash);
  }

  info(
    applicationId: string,
    channelId: string,
    connectionId: string,
    client: ClientRecord,
    conn: Record<string, string>,
    levels: LevelSnapshot,
    state?: string,
  ): ConnectionInfo {
    return this.resolve(applicationId, channelId, connectionId, client, conn, levels, state).info;
  }

  private resolve(
    applicationId: string,
    channelId: string,
    connectionId: string,
    client: ClientRecord,
    conn: Record<string, string>,
    levels: LevelSnapshot,
    state?: string,
  ) {
    const stored = storedConnection(conn);
    if (state) stored.state = state as typeof stored.state;
    const settings = effectiveSettings(levels, {
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

  /**
   * The event of a connection change: its info (as read from the store), and beside it the
   * recording context (client protocol, effective recording mode) the recording service reads.
   */
  connectionEvent(
    owner: EventOwner,
    type: WebhookEventName,
    cause: EventCause,
    c: {
      channelId: string;
      connectionId: string;
      client: ClientRecord;
      conn: Record<string, string>;
      levels: LevelSnapshot;
      state?: string;
      stats?: MediaStats;
      at?: number;
    },
  ): DomainEvent {
    const { info, settings } = this.resolve(
      owner.applicationId,
      c.channelId,
      c.connectionId,
      c.client,
      c.conn,
      c.levels,
      c.state,
    );
    return domainEvent(
      owner,
      type,
      cause,
      {
        channelId: c.channelId,
        client: c.client,
        connection: info,
        connectionStats: c.stats ?? null,
        recording: { clientProtocol: info.clientProtocol, recordingMode: settings.recordingMode },
      },
      c.at,
    );
  }

  /** Keeps the applications index in step with an in-use transition. */
  async index(applicationId: string, transition: IndexTransition | null): Promise<void> {
    if (transition) await this.store.indexApply(applicationId, transition);
  }

  /**
   * The event of a connection that left the live model. Its media server's counts moved in the
   * script that removed it (close_conn in scripts.ts), whatever closed it.
   */
  closedConnection(
    owner: EventOwner,
    closed: ClosedConnection,
    client: ClientRecord,
    cause: EventCause,
    events: DomainEvent[],
  ): void {
    const type = connectionStateEvent(closed.final);
    if (type)
      events.push(this.connectionEvent(owner, type, cause, { ...closed, client, state: closed.final, at: closed.at }));
  }

  /** Events of a client leaving a channel (its connections closed first). */
  leftChannel(
    owner: EventOwner,
    left: LeftChannel,
    client: ClientRecord,
    cause: EventCause,
    events: DomainEvent[],
  ): void {
    for (const closed of left.closed) this.closedConnection(owner, closed, client, cause, events);
    events.push(domainEvent(owner, 'channel.client.left', cause, { channelId: left.channelId, client }, left.at));
    if (left.deactivated)
      events.push(domainEvent(owner, 'channel.deactivated', cause, { channelId: left.channelId, client }, left.at));
  }

  /**
   * `deliver` for a change applied with a journal entry (see OperationJournal): its events get their
   * ids from the entry, and the entry goes once they are stored or parked. When they are neither,
   * the entry stays, for another replica to publish them later.
   */
  async settle(entry: JournalEntry, deliveries: Delivery[], events: DomainEvent[]): Promise<void> {
    stampEvents(events, entry.id);
    try {
      await this.deliver(deliveries, events);
    } catch (e) {
      if (e instanceof EventsParked) this.journal.close(entry.id);
      throw e;
    }
    this.journal.close(entry.id);
  }

  /** Sends pushes and publishes events; the pushes go out even when the events must be parked. */
  async deliver(deliveries: Delivery[], events: DomainEvent[]): Promise<void> {
    const pushed = this.pusher.send(deliveries).catch((e: unknown) => {
      this.logger.event('error', 'pushes not sent', { error: (e as Error).message });
      return 0;
    });
    try {
      await this.events.publish(events);
    } finally {
      await pushed;
    }
  }
}
