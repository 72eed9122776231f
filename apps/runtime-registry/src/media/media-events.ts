import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  type ConnectionEndReason,
  type ConnectionState,
  type MediaAgentEvent,
  type MediaAgentEventEnvelope,
  type MediaStats,
  type ServerPush,
} from '@switchboard/contracts';
import { OperationJournal } from '../events/journal.js';
import type { Delivery } from '../events/pusher.js';
import { parseJson } from '../model/records.js';
import { ChangeDelivery, type ChangeEffects } from '../runtime/change-delivery.js';
import { SERVER_CAUSE } from '../runtime/connection-events.js';
import { ConnectionLifecycle } from '../runtime/connection-lifecycle.js';
import { LIVE_STATES } from '../runtime/edge-steps.js';
import type { JournalContext } from '../runtime/journaled.js';
import { esc, splitMember } from '../store/keys.js';
import { LiveStore } from '../store/live-store.js';
import type { ConnectionIds } from '../store/store-types.js';
import { agentConnectionStats, agentTransport } from './agent-stats.js';

/** What became of one event: applied, or ignored (not a connection the registry holds there, or no change). */
export type MediaEventOutcome = 'applied' | 'ignored';

type ConnectionEvent = Extract<MediaAgentEvent, { connectionId: string }>;
type Of<K extends MediaAgentEvent['kind']> = Extract<MediaAgentEvent, { kind: K }>;

/** A connection of the registry a media event names: its ids and its application. */
interface Target {
  applicationId: string;
  ref: ConnectionIds;
  /** Null: a peer connection, on no media server. */
  mediaServerId: string | null;
}

const NOT_YET_CONNECTED: readonly ConnectionState[] = ['new', 'initializing', 'connecting'];
const FAILABLE: readonly ConnectionState[] = ['new', 'initializing', 'connecting', 'connected'];

/**
 * What the media-agents report about the connections the registry placed on their servers (README,
 * "Media servers (Janus)"): state moves through the store's state script (journaled, events with
 * origin `server`), pushes to the client's gateway, and the connections' statistics. Only a
 * connection the registry holds on the reporting media server is touched.
 */
@Injectable()
export class MediaEvents {
  constructor(
    @Inject(LiveStore) private readonly store: Pick<LiveStore, 'read' | 'keys'>,
    private readonly connections: ConnectionLifecycle,
    private readonly journal: OperationJournal,
    @Inject(ChangeDelivery) private readonly effects: ChangeEffects,
  ) {}

  async handle(envelope: MediaAgentEventEnvelope): Promise<MediaEventOutcome> {
    const event = envelope.event;
    if (!('connectionId' in event)) return 'ignored'; // server.stats, room.ended: the registry derives its own
    const target = await this.find(envelope.mediaServerId.toLowerCase(), event);
    if (!target) return 'ignored';
    try {
      return await this.apply(target, event as ConnectionEvent);
    } catch (e) {
      // Gone meanwhile, or in a state this event does not move it from (closing, already failed).
      if (e instanceof DomainError && (e.code === 'NotFound' || e.code === 'Conflict')) return 'ignored';
      throw e;
    }
  }

  private async apply(target: Target, event: ConnectionEvent): Promise<MediaEventOutcome> {
    switch (event.kind) {
      case 'connection.webrtcup':
        return this.connected(target);
      case 'connection.hangup':
        return this.fail(target, event.reason, 'failed');
      case 'connection.ended':
        return this.ended(target, event);
      case 'subscription.ended':
        return this.close(target, event.reason === 'kicked' ? 'remote-kicked' : 'remote-left');
      case 'connection.offer':
        return this.offer(target, event);
      case 'connection.stats':
        return this.stats(target, event);
      case 'connection.media':
      case 'connection.slowlink':
        return 'ignored';
    }
  }

  /** The connection a media event names, if the registry holds it on that media server. */
  private async find(mediaServerId: string, event: { applicationId: string; channelId: string; connectionId: string }) {
    const key = this.store.keys.channelConnectionIds(event.applicationId, event.channelId);
    const [member] = (await this.store.read([['hget', key, esc(event.connectionId)]])) as [string | null];
    if (!member) return null;
    const [userId = '', deviceId = '', clientId = ''] = splitMember(member);
    const ref = { userId, deviceId, clientId, channelId: event.channelId, connectionId: event.connectionId };
    return { applicationId: event.applicationId, ref, mediaServerId } satisfies Target;
  }

  /**
   * The connection's statistics from its media server, with the frame size and rate the client last
   * reported (Janus measures none: the video stream's size, and usage's pixel buckets, stay real),
   * and its transport (the selected ICE pair) for the connection's info.
   */
  private async stats(target: Target, event: Of<'connection.stats'>): Promise<MediaEventOutcome> {
    const { userId, deviceId, clientId, channelId, connectionId } = target.ref;
    const key = this.store.keys.connection(target.applicationId, channelId, userId, deviceId, clientId, connectionId);
    const [stored] = (await this.store.read([['hget', key, 'stats']])) as [string | null];
    const now = Date.now();
    const stats = { ...agentConnectionStats(event, now), ...reportedFrame(stored) };
    const transport = agentTransport(event);
    const fields: Record<string, string> = transport ? { transport: JSON.stringify(transport) } : {};
    await this.connections.recordStats(target.applicationId, target.ref, stats, SERVER_CAUSE, now, fields);
    return 'applied';
  }

  /** Janus says the PeerConnection is up: connected, and the client hears it. */
  private async connected(target: Target): Promise<MediaEventOutcome> {
    const moved = await this.move(target, 'connected', NOT_YET_CONNECTED, null);
    if (!moved) return 'ignored';
    await this.effects.settle(moved.entry, this.push(target, moved.gatewayId, { state: 'connected' }), moved.events);
    return 'applied';
  }

  /** failing then failed (error MediaFailed), and the client hears the connection ended. */
  private async fail(target: Target, message: string, reason: ConnectionEndReason): Promise<MediaEventOutcome> {
    const error = { code: 'MediaFailed', message };
    const failing = await this.move(target, 'failing', FAILABLE, error);
    if (failing) await this.effects.settle(failing.entry, [], failing.events);
    const failed = await this.move(target, 'failed', ['failing'], error);
    if (!failed) return failing ? 'applied' : 'ignored';
    await this.effects.settle(failed.entry, this.push(target, failed.gatewayId, { ended: reason }), failed.events);
    return 'applied';
  }

  /** The other side of a peer connection that ended (no media server tells it): closed, and its client hears why. */
  remotePeerEnded(applicationId: string, ref: ConnectionIds, reason: 'remote-left' | 'remote-kicked') {
    return this.close({ applicationId, ref, mediaServerId: null }, reason);
  }

  /** Closed by the media server (origin server), and the client hears why. */
  private async close(target: Target, reason: ConnectionEndReason | 'kicked'): Promise<MediaEventOutcome> {
    const closed = await this.move(target, 'closed', LIVE_STATES, null);
    if (!closed) return 'ignored';
    const push = reason === 'kicked' ? { kicked: true as const } : { ended: reason };
    await this.effects.settle(closed.entry, this.push(target, closed.gatewayId, push), closed.events);
    return 'applied';
  }

  private ended(target: Target, event: Of<'connection.ended'>): Promise<MediaEventOutcome> {
    if (event.reason === 'media-server-lost') return this.fail(target, 'The media server was lost.', event.reason);
    // left: the edge closes it itself. kicked / room-destroyed: the registry closed it first; one
    // still open is closed now, and its client hears it as a kick of the connection.
    if (event.reason === 'left') return Promise.resolve('ignored');
    return this.close(target, 'kicked');
  }

  private async offer(target: Target, event: Of<'connection.offer'>): Promise<MediaEventOutcome> {
    const key = this.store.keys.client(
      target.applicationId,
      target.ref.userId,
      target.ref.deviceId,
      target.ref.clientId,
    );
    const [gatewayId] = (await this.store.read([['hget', key, 'gatewayId']])) as [string | null];
    if (!gatewayId) return 'ignored';
    await this.effects.deliver(this.push(target, gatewayId, { offer: event.offer }), []);
    return 'applied';
  }

  /** One journaled state move of the connection on its media server; null when it changed nothing. */
  private async move(
    target: Target,
    state: ConnectionState,
    from: readonly ConnectionState[],
    error: { code: string; message: string } | null,
  ) {
    const context: JournalContext = {
      kind: 'media',
      applicationId: target.applicationId,
      connection: target.ref,
      state,
    };
    // Recorded only by a run that changes the connection (a run that refuses or changes nothing has no entry).
    const entry = this.journal.open(context);
    const a = target.applicationId;
    try {
      const moved = await this.connections.moveMediaState(
        a,
        target.ref,
        state,
        from,
        target.mediaServerId,
        error,
        entry,
      );
      return moved.changed ? { ...moved, entry } : null;
    } catch (e) {
      if (e instanceof DomainError && (e.code === 'NotFound' || e.code === 'Conflict')) return null;
      throw e;
    }
  }

  private push(
    target: Target,
    gatewayId: string | null,
    what:
      | { state: ConnectionState }
      | { ended: ConnectionEndReason }
      | { kicked: true }
      | { offer: Of<'connection.offer'>['offer'] },
  ): Delivery[] {
    const { channelId, connectionId, userId, deviceId, clientId } = target.ref;
    let push: ServerPush;
    if ('state' in what) push = { type: 'connection.state', channelId, connectionId, state: what.state };
    else if ('ended' in what) push = { type: 'connection.ended', channelId, connectionId, reason: what.ended };
    else if ('offer' in what) push = { type: 'connection.offer', channelId, connectionId, offer: what.offer };
    else push = { type: 'kicked', channelId, connectionId };
    return [{ gatewayId, client: { applicationId: target.applicationId, userId, deviceId, clientId }, push }];
  }
}

/** The frame fields of stored statistics that have them (a client's report). */
function reportedFrame(stored: string | null): Partial<MediaStats> {
  const previous = parseJson<Partial<MediaStats> | null>(stored ?? undefined, null);
  const frame: Partial<MediaStats> = {};
  for (const field of ['frameWidth', 'frameHeight', 'frameRate'] as const) {
    const value = previous?.[field];
    if (typeof value === 'number') frame[field] = value;
  }
  return frame;
}
