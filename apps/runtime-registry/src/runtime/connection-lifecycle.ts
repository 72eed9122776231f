import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  type ConnectionState,
  type DomainEvent,
  type EdgeResults,
  type MediaStats,
} from '@switchboard/contracts';
import { EventPublisher } from '../events/event-publisher.js';
import { OperationJournal } from '../events/journal.js';
import { connectionStateEvent, type EventCause, type EventOwner } from '../model/events.js';
import { connectionFields, mediaStats } from '../model/records.js';
import { effectiveSettings, publicSettings } from '../model/settings.js';
import { checkUnmute, unmutedKinds } from '../model/unmute.js';
import {
  LiveStore,
  type ConnectionIds,
  type ConnectionSnapshot,
  type JournalEntry,
  type ScriptCall,
  type StateResult,
} from '../store/live-store.js';
import { ServersStore } from '../store/servers-store.js';
import { ChangeDelivery, type ChangeEffects } from './change-delivery.js';
import { CLIENT_CAUSE, clientOf, closedConnectionEvents, connectionEvent, SERVER_CAUSE } from './connection-events.js';
import { ALLOWED_FROM, connectionOfReport, LIVE_STATES, type Report, type Step } from './edge-steps.js';
import type { JournalContext } from './journaled.js';

/** Settings writes an unmute's check may see come in between before it gives up (Unavailable). */
const MAX_UNMUTE_CHECKS = 5;
const CLAIM_FLAG = { sfu: 'disableSfu', mcu: 'disableMcu', peer: 'disablePeer' } as const;

/** The connection scripts of the store (LiveStore). */
export type ConnectionStore = Pick<LiveStore, 'openCall' | 'connStateCall' | 'connPatch'> & {
  call<T>(call: ScriptCall<T>, journal?: JournalEntry): Promise<T>;
};

/**
 * A connection's life as the client edge reports it: open (placed on a media server for sfu/mcu),
 * state changes along the state machine, patches and statistics, close.
 */
@Injectable()
export class ConnectionLifecycle {
  constructor(
    @Inject(LiveStore) private readonly store: ConnectionStore,
    private readonly servers: ServersStore,
    private readonly journal: OperationJournal,
    private readonly events: EventPublisher,
    @Inject(ChangeDelivery) private readonly effects: ChangeEffects,
  ) {}

  openStep(r: Report<'connection.open'>): Step<ConnectionSnapshot> {
    const a = r.client.applicationId;
    const ref = connectionOfReport(r);
    const { set } = connectionFields({
      tag: r.tag,
      streams: r.streams,
      remoteConnectionId: r.remoteConnectionId ?? null,
    });
    // sfu/mcu: placed on a media server by the same script (nothing to release when the open fails);
    // a downstream sfu connection on its upstream's.
    const timeoutMs = this.servers.heartbeatTimeoutMs;
    const remoteConnectionId = r.type === 'sfu' ? (r.remoteConnectionId ?? null) : null;
    const placement = r.type === 'sfu' || r.type === 'mcu' ? { timeoutMs, remoteConnectionId } : null;
    return {
      call: this.store.openCall(a, ref, r.type, set, CLAIM_FLAG[r.type], placement),
      finish: async (snapshot) => {
        const settings = effectiveSettings(snapshot.levels, { ...r.client, connectionId: r.connectionId });
        const answer: EdgeResults['connection.open'] = {
          mediaServerId: snapshot.conn.mediaServerId ?? null,
          settings: publicSettings(settings),
        };
        return { answer, events: [], deliveries: [] };
      },
    };
  }

  stateStep(r: Report<'connection.state'>): Step<StateResult> {
    const a = r.client.applicationId;
    const ref = connectionOfReport(r);
    return {
      call: this.stateCall(a, ref, r.state, ALLOWED_FROM[r.state], r.error ?? null, r.sessionId, { reported: true }),
      finish: async (result) => ({
        answer: { ok: true },
        events: this.movedState(a, ref, r.state, result, CLIENT_CAUSE),
        deliveries: [],
      }),
    };
  }

  async close(r: Report<'connection.close'>): Promise<EdgeResults['connection.close']> {
    const entry = this.journal.open({ kind: 'close', report: r } satisfies JournalContext);
    const a = r.client.applicationId;
    const ref = connectionOfReport(r);
    let events: DomainEvent[];
    try {
      const call = this.stateCall(a, ref, 'closed', LIVE_STATES, null, r.sessionId);
      events = this.movedState(a, ref, 'closed', await this.store.call(call, entry), CLIENT_CAUSE);
    } catch (e) {
      // Closing a connection that is already gone (a retried report, or it failed), or of a
      // registration that ended (`sessionId`), changes nothing.
      if (e instanceof DomainError && e.code === 'NotFound') return { ok: true };
      throw e;
    }
    await this.effects.settle(entry, [], events);
    return { ok: true };
  }

  /**
   * Moves a connection to a state (the store keeps its media server statistics); returns the events
   * to publish. `entry`: the change is journaled with it (the caller settles it).
   */
  async moveState(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    from: readonly string[],
    error: { code: string; message: string } | null,
    cause: EventCause,
    entry?: JournalEntry,
  ): Promise<DomainEvent[]> {
    const result = await this.store.call(this.stateCall(a, ref, state, from, error), entry);
    return this.movedState(a, ref, state, result, cause);
  }

  /**
   * `moveState` for a connection of media server `mediaServerId` (NotFound when it is not there):
   * the events, and the client's gateway (null when the change was no change).
   */
  async moveMediaState(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    from: readonly string[],
    mediaServerId: string | null,
    error: { code: string; message: string } | null,
    entry: JournalEntry,
  ): Promise<{ events: DomainEvent[]; gatewayId: string | null; changed: boolean }> {
    // Null: a peer connection (no media server), moved by the registry itself.
    const call = this.stateCall(a, ref, state, from, error, undefined, { mediaServerId: mediaServerId ?? undefined });
    const result = await this.store.call(call, entry);
    const events = this.movedState(a, ref, state, result, SERVER_CAUSE);
    return { events, gatewayId: result.same ? null : clientOf(ref, result.client).gatewayId, changed: !result.same };
  }

  /** The events of a journaled state change, from its script's answer (see `EdgeService.recover`). */
  stateEvents(a: string, ref: ConnectionIds, state: ConnectionState, cause: EventCause, answer: string): DomainEvent[] {
    return this.movedState(a, ref, state, this.stateCall(a, ref, state, [], null).result(JSON.parse(answer)), cause);
  }

  private stateCall(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    from: readonly string[],
    error: { code: string; message: string } | null,
    session?: string,
    only?: { mediaServerId?: string; reported?: boolean },
  ): ScriptCall<StateResult> {
    const terminal = state === 'closed' || state === 'failed';
    const errorText = error ? JSON.stringify(error) : null;
    return this.store.connStateCall(a, ref, state, from, terminal, errorText, session, only);
  }

  /** The events of a state change the store applied. */
  private movedState(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    result: StateResult,
    cause: EventCause,
  ): DomainEvent[] {
    if (result.same) return [];
    const owner: EventOwner = { applicationId: a, organizationId: result.organizationId };
    const client = clientOf(ref, result.client);
    if (result.closed) return closedConnectionEvents(owner, result.closed, client, cause);
    const type = connectionStateEvent(state);
    if (!result.snapshot || !type) return [];
    const { conn, levels } = result.snapshot;
    return [connectionEvent(owner, type, cause, { ...ref, client, conn, levels, at: result.at })];
  }

  async update(r: Report<'connection.update'>): Promise<EdgeResults['connection.update']> {
    const a = r.client.applicationId;
    const ref = connectionOfReport(r);
    const { set, del } = connectionFields({
      tag: r.tag,
      streams: r.streams,
      localAudioMuted: r.localAudioMuted,
      localVideoMuted: r.localVideoMuted,
    });
    // An unmute the settings may disable is checked against them as read, then written only if no
    // settings write came in between (else checked again): the registry, not the edge's copy, decides.
    const unmute = unmutedKinds(r);
    let s = await this.store.connPatch(a, ref, set, del, unmute.length ? { unmute } : undefined);
    for (let checks = 1; s.check !== undefined; checks++) {
      checkUnmute(unmute, s.conn, s.levels, ref);
      if (checks > MAX_UNMUTE_CHECKS)
        throw new DomainError('Unavailable', 'The connection settings kept changing; try the update again.');
      s = await this.store.connPatch(a, ref, set, del, { unmute, seq: s.check });
    }
    const owner = { applicationId: a, organizationId: s.organizationId };
    const client = clientOf(ref, s.client);
    await this.events.publish([
      connectionEvent(owner, 'connection.updated', CLIENT_CAUSE, { ...ref, client, conn: s.conn, levels: s.levels }),
    ]);
    return { ok: true };
  }

  async stats(r: Report<'connection.stats'>): Promise<EdgeResults['connection.stats']> {
    const now = Date.now();
    await this.recordStats(r.client.applicationId, connectionOfReport(r), mediaStats(r.stats, now), CLIENT_CAUSE, now);
    return { ok: true };
  }

  /**
   * Keeps a connection's latest statistics (and `fields` of the record beside them, e.g. its
   * transport) and publishes `connection.stats`.
   */
  async recordStats(
    a: string,
    ref: ConnectionIds,
    stats: MediaStats,
    cause: EventCause,
    now: number,
    fields: Record<string, string> = {},
  ): Promise<void> {
    const s = await this.store.connPatch(a, ref, { ...fields, stats: JSON.stringify(stats) }, []);
    const owner = { applicationId: a, organizationId: s.organizationId };
    const client = clientOf(ref, s.client);
    const source = { ...ref, client, conn: s.conn, levels: s.levels, stats, at: now };
    await this.events.publish([connectionEvent(owner, 'connection.stats', cause, source)]);
  }
}
