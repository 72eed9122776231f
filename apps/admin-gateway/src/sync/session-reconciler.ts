import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import {
  EDGE_SESSIONS_MAX_CLIENTS,
  sameSettings,
  type ClientRef,
  type EdgeOutcome,
  type EdgeReport,
  type EdgeSessionState,
  type ServerPush,
} from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { clientKey, type ClientSession } from './client-session.js';
import { EdgeClient } from './edge.client.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { SessionStore } from './session.store.js';
import { SyncMetrics } from './sync.metrics.js';

export type ReconcileTrigger = 'reconnect' | 'periodic' | 'retry';

/** What checking one session came to. */
type Checked = 'ok' | 'corrected' | 'busy' | 'failed';

/** The reports of a pass that removed what the registry held and the sessions did not. */
interface Removed {
  left: number;
  closed: number;
  /** Refused or unanswered: their sessions are checked again. */
  failed: number;
}

/** What the registry holds for a client and its session does not (see `SessionReconciler#extras`). */
type Removal = Extract<EdgeReport, { kind: 'client.leave' | 'connection.close' }>;

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
 * nobody noticed), each session is checked against what runtime-registry holds for its client
 * (the edge read `gateway.sessions`, see EdgeSessionState), and what the lost pushes would have
 * told it goes through the one path every push takes (`SessionStore#push`: the edge state changes
 * and the client gets the `push` frame):
 * - the client is no longer registered: `unregistered` (the session ends, 4010);
 * - the registration is held by another gateway replica or another session of the client (it
 *   registered again elsewhere): `unregistered` too, as the registry pushes then; nothing is
 *   reported back, the registration is someone else's. A registration naming no gateway or no
 *   session (a reporter that does not send them) is not taken for someone else's;
 * - a channel the session is in that the registry no longer lists for the client: `kicked`;
 * - a channel whose claim differs: `claim.updated`;
 * - a connection the registry no longer has: `kicked` with its connection id;
 * - effective settings of a connection that differ: `settings`, with the application's settings
 *   sequence number at the read as its `version`: the session orders it with the pushes as it
 *   orders pushes (ClientSession#apply), so a read older than a push applied already is stale and
 *   rolls nothing back, and a push older than the read that arrives after it is stale in turn;
 * - aliases, tag or roles that differ: `client.updated`.
 *
 * One `gateway.sessions` request reads up to EDGE_SESSIONS_MAX_CLIENTS sessions (the registry reads
 * them per application in one atomic step); a pass sends at most SYNC_RECONCILE_CONCURRENCY of them
 * at a time. A session whose requests are being handled is not asked for; one that changed while it
 * was read (a request, a push) is left alone; both are checked again shortly, as are the sessions
 * whose read failed (the registry restarting too), with a growing delay.
 *
 * The settings compared are the effective settings a `settings` push carries (the mute setting,
 * not what media sees), so a connection its client muted itself is checked like any other.
 *
 * What the registry holds and the session does not is removed the other way, by reporting to the
 * registry (EdgeClient, the path of every report: the reports of a pass sent in one turn travel in
 * one batch request, one sequence each), for a registration that is the session's own (this replica
 * and this session; one naming none is not taken for it here):
 * - a channel the registry lists for the client that the session is not in: `client.leave` (the
 *   registry closes the client's connections in it too);
 * - a connection the registry lists in a channel the session is in that the session does not have
 *   (there): `connection.close`.
 * They come from requests whose answer the gateway did not get (a NATS request timeout, a registry
 * restart): the gateway undid them at the edge and answered the client an error, while the registry
 * may have applied them. The edge is the truth here: memberships and connections come only from the
 * client's own requests. The client gets no push for these (nothing changes at the edge). A join or
 * open whose answer is awaited is no such difference: its session is busy from the moment its batch
 * is taken up (prepared, the edge state changed in advance) until it is answered or undone, and moves
 * its revision at both ends, so a session read while one was under way is left alone. The session is
 * busy while the reports of a pass are under way too, and its own reports (its requests, its
 * unregister) wait for them (ClientSession#corrections): the registry runs the sequences of a batch
 * concurrently, and a join of the channel sent meanwhile must not be applied before the leave.
 * Reports the registry refuses or does not answer get their session checked again. They carry the
 * session's `sessionId`: one that reaches the registry after the client registered again in another
 * session (between the read and the report) changes nothing there (the registry applies a leave or
 * close naming a session only while that registration holds the client).
 *
 * A registration whose register answer was lost is removed too (`ghosts`): the gateway undid the
 * session at the edge, yet the registry may have registered the client through this replica, and
 * as this replica heartbeats its sweeper never drops it. Every periodic and reconnect pass pages
 * through the clients the registry holds as registered through this replica (`gateway.clients`),
 * and reads the registration (`gateway.sessions`) of those this replica has no session for (nor a
 * pending unregister, SessionStore#holds). A client seen so by two scans in a row, with the same
 * registration (its sessionId) both times, is unregistered (`client.unregister`, reason `dropped`,
 * this replica's gatewayId and that registration's sessionId: the registry applies it only while
 * that very registration holds the client). A register being applied is never taken for one: its
 * session is in the store from before the register is reported until it is answered (or undone),
 * and every later session of the client has another sessionId; the second scan is a margin on top.
 * The unregister is kept pending in the SessionStore like an ended session's (sent again until
 * taken), and a new session of the client waits for it before registering (SessionStore#settle).
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
  /** A scan for ghost registrations is under way (see `ghosts`). */
  private scanning = false;
  /**
   * The registrations through this replica the last complete scan found it had no session for:
   * client key -> the registration's sessionId (null: it names none).
   */
  private suspects = new Map<string, string | null>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
    private readonly nats: NatsClient,
    private readonly edge: EdgeClient,
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
    // On its own (a pass does not wait for it, nor it for a pass): skipped while one is under way.
    if (trigger !== 'retry') this.scan(trigger);
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

  private scan(trigger: ReconcileTrigger): void {
    if (this.scanning) return;
    this.scanning = true;
    void this.ghosts(trigger)
      .catch((e: unknown) => {
        // Counting starts over: "two scans in a row" means two complete ones.
        this.suspects = new Map();
        this.logger.event('warn', 'scan for registrations of this replica without a session failed', {
          trigger,
          error: e instanceof Error ? e.message : String(e),
        });
      })
      .finally(() => {
        this.scanning = false;
      });
  }

  /**
   * Unregisters the registrations the registry holds through this replica that it has no session
   * for, seen so in two scans in a row (see the class comment).
   */
  private async ghosts(trigger: ReconcileTrigger): Promise<void> {
    // The clients without a session here, by key (a client may come twice).
    const candidates = new Map<string, ClientRef>();
    let cursor: string | undefined;
    do {
      const page = await this.edge.gatewayClients(this.gatewayId, cursor, EDGE_SESSIONS_MAX_CLIENTS);
      if (!Array.isArray(page?.clients) || (page.next !== null && typeof page.next !== 'string'))
        throw new Error('gateway.clients answered an unreadable page');
      for (const c of page.clients) {
        if (
          typeof c?.applicationId !== 'string' ||
          typeof c.userId !== 'string' ||
          typeof c.deviceId !== 'string' ||
          typeof c.clientId !== 'string'
        )
          throw new Error('gateway.clients answered an unreadable client');
        // A plain ClientRef: what gateway.sessions and the unregister accept.
        const ref: ClientRef = {
          applicationId: c.applicationId,
          userId: c.userId,
          deviceId: c.deviceId,
          clientId: c.clientId,
        };
        if (!this.store.holds(ref)) candidates.set(clientKey(ref), ref);
      }
      cursor = page.next ?? undefined;
      if (this.stopping) return;
    } while (cursor !== undefined);
    const seen = new Map<string, string | null>();
    const refs = [...candidates.values()];
    let unregistered = 0;
    for (let i = 0; i < refs.length && !this.stopping; i += EDGE_SESSIONS_MAX_CLIENTS) {
      const chunk = refs.slice(i, i + EDGE_SESSIONS_MAX_CLIENTS);
      const states = await this.edge.sessions(chunk);
      // Synchronously from the check to the report (SessionStore#unregisterGhost checks `holds` again).
      chunk.forEach((ref, k) => {
        const state = states[k];
        // Unregistered meanwhile, or held through another replica now (the page was older): not this replica's.
        if (!state || state.gatewayId !== this.gatewayId) return;
        const key = clientKey(ref);
        // A session added since the page was read (its register reported after the read, or just now).
        if (this.store.holds(ref)) return;
        const sessionId = typeof state.sessionId === 'string' ? state.sessionId : null;
        seen.set(key, sessionId);
        // Seen by the previous scan too, as the same registration.
        if (!this.suspects.has(key) || this.suspects.get(key) !== sessionId) return;
        seen.delete(key);
        if (
          this.store.unregisterGhost(ref, sessionId, () =>
            this.metrics.reconcileCorrections.inc({ report: 'unregister' }),
          )
        )
          unregistered++;
      });
    }
    if (this.stopping) return;
    this.suspects = seen;
    if (unregistered || seen.size) {
      this.logger.event(
        unregistered ? 'info' : 'debug',
        'registrations through this replica without a session: unregistered when seen again by the next scan',
        {
          trigger,
          unregistered,
          suspects: seen.size,
        },
      );
    }
  }

  /**
   * Checks the sessions, EDGE_SESSIONS_MAX_CLIENTS per `gateway.sessions` read, at most
   * SYNC_RECONCILE_CONCURRENCY reads at a time; answers the ones to check again.
   */
  private async pass(trigger: ReconcileTrigger, sessions: ClientSession[]): Promise<ClientSession[]> {
    const again: ClientSession[] = [];
    const counts: Record<Checked, number> = { ok: 0, corrected: 0, busy: 0, failed: 0 };
    const removed: Removed = { left: 0, closed: 0, failed: 0 };
    let firstError: string | undefined;
    const chunks: ClientSession[][] = [];
    for (let i = 0; i < sessions.length; i += EDGE_SESSIONS_MAX_CLIENTS)
      chunks.push(sessions.slice(i, i + EDGE_SESSIONS_MAX_CLIENTS));
    let next = 0;
    const worker = async () => {
      while (next < chunks.length && !this.stopping) {
        const chunk = chunks[next++]!;
        const { checked, error } = await this.check(chunk, removed);
        firstError ??= error;
        chunk.forEach((session, i) => {
          const outcome = checked[i]!;
          counts[outcome]++;
          if (outcome === 'failed') again.push(session);
          else if (outcome === 'busy') {
            const rounds = (this.busyRounds.get(session) ?? 0) + 1;
            this.busyRounds.set(session, rounds);
            if (rounds < MAX_BUSY_RETRIES) again.push(session);
          } else this.busyRounds.delete(session);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.config.syncReconcileConcurrency, chunks.length) }, worker));
    this.metrics.reconcilePasses.inc({ trigger, outcome: again.length ? 'incomplete' : 'ok' });
    if (counts.corrected || counts.failed) {
      this.logger.event(
        counts.failed ? 'warn' : 'info',
        'reconciled the clients of this replica with runtime-registry',
        {
          trigger,
          sessions: sessions.length,
          corrected: counts.corrected,
          busy: counts.busy,
          failed: counts.failed,
          // Reports removing what the registry held and the sessions did not (see the class comment).
          ...(removed.left || removed.closed || removed.failed
            ? { left: removed.left, closed: removed.closed, reportsFailed: removed.failed }
            : {}),
          ...(firstError ? { error: firstError } : {}),
        },
      );
    }
    return again;
  }

  /**
   * Reads what the registry holds for a chunk of sessions (one `gateway.sessions` request) and
   * applies what differs; one outcome per session. A session ended is `ok`; one whose requests are
   * being handled is not asked for (`busy`); all those asked are `failed` when the read fails.
   * Resolves once the reports removing what the sessions lack are answered (counted in `removed`).
   */
  private async check(chunk: ClientSession[], removed: Removed): Promise<{ checked: Checked[]; error?: string }> {
    const checked: Array<Checked | undefined> = chunk.map((s) => (s.ended ? 'ok' : s.busy > 0 ? 'busy' : undefined));
    const asked = chunk.filter((_, i) => checked[i] === undefined);
    // What a session was before its read: one that changed meanwhile is left alone (see `reconcile`).
    const revisions = asked.map((s) => s.revision);
    let error: string | undefined;
    let states: Array<EdgeSessionState | null> | undefined;
    if (asked.length) {
      try {
        states = await this.edge.sessions(
          asked.map(({ ref }) => ({
            applicationId: ref.applicationId,
            userId: ref.userId,
            deviceId: ref.deviceId,
            clientId: ref.clientId,
          })),
        );
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
    }
    let k = 0;
    // Synchronously, one session after the other: the reports they send go out in one batch.
    const pending = checked.map((outcome, i): Checked | Promise<Checked> => {
      if (outcome) return outcome;
      const at = k++;
      if (!states) return 'failed';
      try {
        return this.reconcile(chunk[i]!, revisions[at]!, states[at] ?? null, removed);
      } catch (e) {
        error ??= e instanceof Error ? e.message : String(e);
        return 'failed';
      }
    });
    const outcomes = await Promise.all(pending);
    return { checked: outcomes, ...(error ? { error } : {}) };
  }

  /**
   * Applies to one session what differs from the registry's state of its client (null: not
   * registered), and reports what the registry holds and the session does not. Nothing is done
   * when the session changed since `revision` (while it was read) or is being changed: the read
   * may predate the change.
   */
  private reconcile(
    session: ClientSession,
    revision: number,
    state: EdgeSessionState | null,
    removed: Removed,
  ): Checked | Promise<Checked> {
    if (session.ended) return 'ok';
    if (session.busy > 0 || session.revision !== revision) return 'busy';
    const pushes = this.differences(session, state);
    // Before the pushes change the session (they only take away what the registry lacks).
    const removals = state ? this.extras(session, state) : [];
    let corrected = false;
    for (const push of pushes) {
      if (session.ended) break;
      // `stale`: a settings push older than the one the connection has (it stays as it is).
      if (this.store.push(session, push) === 'stale') continue;
      this.metrics.reconcileCorrections.inc({ push: push.type });
      corrected = true;
    }
    if (session.ended || removals.length === 0) return corrected ? 'corrected' : 'ok';
    return this.remove(session, removals, removed);
  }

  /**
   * Reports the removals of one session (one sequence each: one refused does not hold back the
   * others), sent now: with those of the other sessions of the chunk, in one batch request. The
   * session is busy until they are answered, and its own reports wait for them (ClientSession#corrections).
   */
  private async remove(session: ClientSession, removals: Removal[], removed: Removed): Promise<Checked> {
    session.busy++;
    session.revision++;
    // EdgeClient#sequence never rejects: a request that failed answers an error per sequence.
    const answered: Promise<EdgeOutcome[][]> = Promise.all(removals.map((report) => this.edge.sequence([report])));
    const done = answered.then(() => undefined);
    session.corrections = done;
    const outcomes = await answered;
    session.busy--;
    session.revision++;
    if (session.corrections === done) session.corrections = undefined;
    let failed = false;
    removals.forEach((report, i) => {
      const outcome = outcomes[i]?.[0];
      if (outcome && 'ok' in outcome) {
        const leave = report.kind === 'client.leave';
        if (leave) removed.left++;
        else removed.closed++;
        this.metrics.reconcileCorrections.inc({ report: leave ? 'leave' : 'close' });
        return;
      }
      // NotFound: the client is not registered any more (what is gone needs no removal; the
      // registry answers ok to a leave or close of what it no longer holds).
      if (outcome && 'error' in outcome && outcome.error.code === 'NotFound') return;
      removed.failed++;
      failed = true;
    });
    return failed ? 'failed' : 'corrected';
  }

  /**
   * What the registry holds for the client and the session does not: a channel it is not in (left),
   * a connection it does not have in a channel it is in (closed). Only for a registration that is
   * the session's own (this replica and this session): another's is not this session's to change;
   * the reports name the session, so the registry applies them only while it holds the client.
   */
  private extras(session: ClientSession, state: EdgeSessionState): Removal[] {
    if (state.gatewayId !== this.gatewayId || state.sessionId !== session.sessionId) return [];
    // A session dropped since the pass listed it (a register the registry refused, undone) has no say.
    if (this.store.get(session.ref) !== session) return [];
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

  /** The pushes that make the session what the registry holds (see the class comment). */
  private differences(session: ClientSession, state: EdgeSessionState | null): ServerPush[] {
    if (!state) return [{ type: 'unregistered', reason: 'The client is no longer registered.' }];
    if (!readable(state)) throw new Error('gateway.sessions answered an unreadable client');
    // Null: a registration that does not say (nothing taken over that this replica could know of).
    if (
      (state.gatewayId !== null && state.gatewayId !== this.gatewayId) ||
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
      const settingsOf = new Map(channel.connections.map((c) => [c.connectionId, c.settings]));
      for (const connection of session.connectionsIn(channelId)) {
        const settings = settingsOf.get(connection.connectionId);
        if (!settings) {
          pushes.push({ type: 'kicked', channelId, connectionId: connection.connectionId });
          continue;
        }
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
          (n) => typeof n?.connectionId === 'string' && typeof n.settings === 'object' && n.settings !== null,
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
  const ka = Object.keys(a).filter((key) => (a as Record<string, unknown>)[key] !== undefined);
  const kb = Object.keys(b).filter((key) => (b as Record<string, unknown>)[key] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** ±20 %: replicas cut off together do not retry in step. */
function jittered(ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}
