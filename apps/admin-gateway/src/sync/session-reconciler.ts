import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import {
  DomainError,
  RuntimeSubjects,
  type CallerScope,
  type ClientRef,
  type ConnectionInfo,
  type EffectiveSettings,
  type RuntimeQueries,
  type RuntimeQuery,
  type RuntimeQueryKind,
  type RuntimeQueryResult,
  type ServerPush,
} from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import type { ClientSession, EdgeConnection } from './client-session.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { SessionStore } from './session.store.js';
import { SyncMetrics } from './sync.metrics.js';

export type ReconcileTrigger = 'reconnect' | 'periodic' | 'retry';

/** What checking one session came to. */
type Checked = 'ok' | 'corrected' | 'busy' | 'failed';

/** First delay before the sessions a pass could not check are checked again; it doubles up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30000;
/** A session busy (its requests being handled) this many passes in a row is left to the next full pass. */
const MAX_BUSY_RETRIES = 5;

/**
 * Makes the edge converge after pushes were lost. Pushes reach this replica over core NATS, at
 * most once: one sent while the replica was cut off from NATS (a NATS restart, a network blip) is
 * gone, and the session it was for would stay stale until its client reconnects. So whenever the
 * NATS connection comes back (and every SYNC_RECONCILE_INTERVAL_MS, a safety net for losses
 * nobody noticed), each session is checked against runtime-registry's live state with the
 * interface A reads it already answers, and what the lost pushes would have told it goes through
 * the one path every push takes (`SessionStore#push`: the edge state changes and the client gets
 * the `push` frame):
 * - the client is no longer registered: `unregistered` (the session ends, 4010);
 * - a channel the session is in that the registry no longer lists for the client: `kicked`;
 * - a connection the registry no longer has: `kicked` with its connection id;
 * - effective settings of a connection that differ: `settings` (without a version: it is the
 *   registry's current state, applied over whatever version the connection had);
 * - aliases, tag or roles that differ: `client.updated`.
 *
 * Reads per session: `client.get` (registered, identity, channel count), `channel.client.connections`
 * for each channel it has connections in (membership, connections, settings), and `client.channels`
 * only when the channel count says a channel without connections was left. At most
 * SYNC_RECONCILE_CONCURRENCY sessions are read at the same time. A session whose requests are being
 * handled, or that changed while it was read (a request, a push), is left alone and checked again
 * shortly; so are the sessions whose reads failed (the registry restarting too), with a growing delay.
 *
 * Not derivable from these reads (nothing in them says it): a claim changed by `claim.updated`,
 * a registration taken over by another gateway replica (the registry does not tell which gateway
 * holds a client), and the audio/video mute setting of a connection its client muted itself.
 */
@Injectable()
export class SessionReconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private running = false;
  /** A full pass asked for while one runs: it follows that one. */
  private queued?: ReconcileTrigger;
  private retryDelay = FIRST_RETRY_MS;
  /** Passes in a row a session was found busy. */
  private readonly busyRounds = new WeakMap<ClientSession, number>();
  private connected = true;
  private stopping = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
    private readonly nats: NatsClient,
    private readonly store: SessionStore,
    private readonly metrics: SyncMetrics,
    private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap() {
    this.nats
      .connection$()
      .then((nc) => this.watch(nc.status()))
      .catch(() => undefined);
    if (this.config.syncReconcileIntervalMs > 0) {
      this.timer = setInterval(() => this.request('periodic'), this.config.syncReconcileIntervalMs);
      this.timer.unref();
    }
  }

  beforeApplicationShutdown() {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** Follows the NATS connection: a pass once it is back (what was pushed meanwhile is lost), none while it is down. */
  private async watch(statuses: AsyncIterable<{ type: string }>): Promise<void> {
    for await (const status of statuses) {
      if (status.type === 'disconnect') this.connected = false;
      else if (status.type === 'reconnect') {
        this.connected = true;
        this.request('reconnect');
      } else if (status.type === 'slowConsumer') {
        // The client dropped messages of a subscription that fell behind: pushes among them, maybe.
        this.request('reconnect');
      }
    }
  }

  /** Asks for a pass over every session (after the one under way, if any). */
  request(trigger: ReconcileTrigger): void {
    if (this.stopping || !this.connected) return;
    if (this.running) {
      if (this.queued !== 'reconnect') this.queued = trigger;
      return;
    }
    this.start(trigger, this.store.list());
  }

  private start(trigger: ReconcileTrigger, sessions: ClientSession[]): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.running = true;
    void this.pass(trigger, sessions).then(
      (again) => this.after(again),
      (e: unknown) => {
        this.logger.event('error', 'reconcile pass failed', { error: e instanceof Error ? e.message : String(e) });
        this.after([]);
      },
    );
  }

  private after(again: ClientSession[]): void {
    this.running = false;
    if (this.stopping) return;
    const queued = this.queued;
    this.queued = undefined;
    if (queued) {
      if (this.connected) this.start(queued, this.store.list());
      return;
    }
    if (again.length === 0) {
      this.retryDelay = FIRST_RETRY_MS;
      return;
    }
    const delay = jittered(this.retryDelay);
    this.retryDelay = Math.min(MAX_RETRY_MS, this.retryDelay * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // While NATS is down the reconnect's pass covers them all.
      if (!this.running && this.connected && !this.stopping) this.start('retry', again);
    }, delay);
    this.retryTimer.unref();
  }

  /** Checks the sessions, SYNC_RECONCILE_CONCURRENCY at a time; answers the ones to check again. */
  private async pass(trigger: ReconcileTrigger, sessions: ClientSession[]): Promise<ClientSession[]> {
    const again: ClientSession[] = [];
    const counts: Record<Checked, number> = { ok: 0, corrected: 0, busy: 0, failed: 0 };
    let firstError: string | undefined;
    let next = 0;
    const worker = async () => {
      while (next < sessions.length && !this.stopping) {
        const session = sessions[next++]!;
        let checked: Checked;
        try {
          checked = await this.check(session);
        } catch (e) {
          checked = 'failed';
          firstError ??= e instanceof Error ? e.message : String(e);
        }
        counts[checked]++;
        if (checked === 'failed') again.push(session);
        else if (checked === 'busy') {
          const rounds = (this.busyRounds.get(session) ?? 0) + 1;
          this.busyRounds.set(session, rounds);
          if (rounds < MAX_BUSY_RETRIES) again.push(session);
        } else this.busyRounds.delete(session);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.config.syncReconcileConcurrency, sessions.length) }, worker));
    this.metrics.reconcilePasses.inc({ trigger, outcome: again.length ? 'incomplete' : 'ok' });
    if (counts.corrected || counts.failed) {
      this.logger.event(counts.failed ? 'warn' : 'info', 'reconciled the clients of this replica with runtime-registry', {
        trigger,
        sessions: sessions.length,
        corrected: counts.corrected,
        busy: counts.busy,
        failed: counts.failed,
        ...(firstError ? { error: firstError } : {}),
      });
    }
    return again;
  }

  /**
   * Reads one session's client from the registry and applies what differs. Nothing is applied when
   * the session changed while it was read (or is being changed): its reads may predate the change.
   */
  private async check(session: ClientSession): Promise<Checked> {
    if (session.ended) return 'ok';
    if (session.busy > 0) return 'busy';
    const revision = session.revision;
    const { applicationId, userId, deviceId, clientId } = session.ref;
    const ref: ClientRef = { applicationId, userId, deviceId, clientId };
    const scope: CallerScope = { organizationId: session.organizationId, operator: false, principal: `admin-gateway:${this.gatewayId}` };
    const joined = [...session.channels.keys()];
    const withConnections = joined.filter((channelId) => session.connectionsIn(channelId).length > 0);
    const [client, ...lists] = await Promise.all([
      this.read(scope, 'client.get', ref),
      ...withConnections.map((channelId) => this.read(scope, 'channel.client.connections', { ...ref, channelId })),
    ]);
    if (client && (typeof client.channelCount !== 'number' || !Array.isArray(client.roles))) throw new Error('client.get answered an unreadable client');
    if (lists.some((list) => list !== null && !Array.isArray(list))) throw new Error('channel.client.connections answered an unreadable list');
    // The registry's connections of the client in each channel it has connections in here; null: not a member.
    const connections = new Map(withConnections.map((channelId, i) => [channelId, lists[i] as ConnectionInfo[] | null]));
    // The channels the registry lists for the client, read only when a channel without connections here may be gone.
    let listed: Set<string> | undefined;
    if (client && joined.length > withConnections.length) {
      const members = withConnections.filter((channelId) => connections.get(channelId) !== null).length;
      if (client.channelCount < members + (joined.length - withConnections.length)) {
        const channels = await this.read(scope, 'client.channels', ref);
        // Unregistered between the two reads: the next pass sees it.
        if (!channels) return 'busy';
        if (!Array.isArray(channels)) throw new Error('client.channels answered an unreadable list');
        listed = new Set(channels.map((c) => c.id));
      }
    }
    if (session.ended) return 'ok';
    if (session.busy > 0 || session.revision !== revision) return 'busy';

    const pushes: ServerPush[] = [];
    if (!client) pushes.push({ type: 'unregistered', reason: 'The client is no longer registered.' });
    else {
      for (const channelId of joined) {
        const list = connections.get(channelId);
        const member = list !== undefined ? list !== null : !listed || listed.has(channelId);
        if (!member) {
          pushes.push({ type: 'kicked', channelId, connectionId: null });
          continue;
        }
        if (!list) continue;
        const infos = new Map(list.map((info) => [info.id, info]));
        for (const connection of session.connectionsIn(channelId)) {
          const info = infos.get(connection.connectionId);
          if (!info) {
            pushes.push({ type: 'kicked', channelId, connectionId: connection.connectionId });
            continue;
          }
          if (!connection.settings) continue;
          const settings = settingsOf(info, connection, connection.settings);
          if (!sameSettings(settings, connection.settings)) pushes.push({ type: 'settings', channelId, connectionId: connection.connectionId, settings });
        }
      }
      if (client.userAlias !== session.userAlias || client.deviceAlias !== session.deviceAlias || client.tag !== session.tag || !sameList(client.roles, session.roles)) {
        pushes.push({ type: 'client.updated', userAlias: client.userAlias, deviceAlias: client.deviceAlias, tag: client.tag, roles: [...client.roles] });
      }
    }
    for (const push of pushes) {
      if (session.ended) break;
      if (this.store.push(session, push) !== 'stale') this.metrics.reconcileCorrections.inc({ push: push.type });
    }
    return pushes.length ? 'corrected' : 'ok';
  }

  /** One interface A read in the session's organization; null when the registry answers NotFound. */
  private async read<K extends RuntimeQueryKind>(scope: CallerScope, kind: K, params: RuntimeQueries[K]['params']): Promise<RuntimeQueryResult<K> | null> {
    try {
      return (await this.nats.request(RuntimeSubjects.query, { scope, query: { kind, ...params } as RuntimeQuery })) as RuntimeQueryResult<K>;
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound') return null;
      throw e;
    }
  }
}

/**
 * A connection's effective settings as the registry reports them in its ConnectionInfo. The mutes
 * there are what media sees: the setting, or the client's own mute. While the client has not muted
 * itself that is the setting; once it has, the setting cannot be told apart and the known one stays.
 */
function settingsOf(info: ConnectionInfo, connection: EdgeConnection, known: EffectiveSettings): EffectiveSettings {
  return {
    recording: info.recording,
    recordingTag: info.recordingTag,
    audioMuted: connection.localAudioMuted ? known.audioMuted : info.localAudioMuted,
    videoMuted: connection.localVideoMuted ? known.videoMuted : info.localVideoMuted,
    audioUnmuteDisabled: info.localAudioUnmuteDisabled,
    videoUnmuteDisabled: info.localVideoUnmuteDisabled,
  };
}

function sameSettings(a: EffectiveSettings, b: EffectiveSettings): boolean {
  return (
    a.recording === b.recording &&
    a.recordingTag === b.recordingTag &&
    a.audioMuted === b.audioMuted &&
    a.videoMuted === b.videoMuted &&
    a.audioUnmuteDisabled === b.audioUnmuteDisabled &&
    a.videoUnmuteDisabled === b.videoUnmuteDisabled
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** ±20 %: replicas cut off together do not retry in step. */
function jittered(ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}
