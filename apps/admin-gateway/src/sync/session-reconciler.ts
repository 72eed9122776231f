import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { EDGE_SESSIONS_MAX_CLIENTS, type EdgeOutcome, type EdgeSessionState } from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import type { ClientSession } from './client-session.js';
import { EdgeClient } from './edge.client.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { GhostRegistrations } from './ghost-registrations.js';
import { jittered } from './jitter.js';
import { differences, registryExtras, type Removal } from './session-differences.js';
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

/** First delay before the sessions a pass could not check are checked again; it doubles up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30000;
/** A session busy (its requests being handled) this many passes in a row is left to the next full pass. */
const MAX_BUSY_RETRIES = 5;

/**
 * Makes the edge converge after pushes were lost (core NATS delivers them at most once): on NATS
 * reconnect and every SYNC_RECONCILE_INTERVAL_MS, each session is checked against what
 * runtime-registry holds for its client and corrected through the one path of every push. What
 * it checks, and why, is in the gateway's README (reconciliation).
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
  private readonly ghosts: GhostRegistrations;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
    private readonly nats: NatsClient,
    private readonly edge: EdgeClient,
    private readonly store: SessionStore,
    private readonly metrics: SyncMetrics,
    private readonly logger: JsonLogger,
  ) {
    this.ghosts = new GhostRegistrations(gatewayId, edge, store, metrics, logger);
  }

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
    this.ghosts.stop();
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
    if (trigger !== 'retry') this.ghosts.scan(trigger);
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
          // Reports removing what the registry held and the sessions did not.
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
    let askedIndex = 0;
    // Synchronously, one session after the other: the reports they send go out in one batch.
    const pending = checked.map((outcome, i): Checked | Promise<Checked> => {
      if (outcome) return outcome;
      const at = askedIndex++;
      if (!states) return 'failed';
      try {
        return this.reconcile(chunk[i]!, revisions[at]!, states[at] ?? null, removed);
      } catch (e) {
        error ??= e instanceof Error ? e.message : String(e);
        return 'failed';
      }
    });
    const outcomes = await Promise.all(pending.map((outcome) => Promise.resolve(outcome)));
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
    const pushes = differences(session, state, this.gatewayId);
    // Before the pushes change the session (they only take away what the registry lacks). A session
    // dropped since the pass listed it (a register the registry refused, undone) has no say.
    const removals =
      state && this.store.get(session.ref) === session ? registryExtras(session, state, this.gatewayId) : [];
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
}
