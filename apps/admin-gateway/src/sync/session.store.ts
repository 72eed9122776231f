import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  SYNC_CLOSE_CODES,
  type ClientRef,
  type EdgeReport,
  type ServerPush,
} from '@switchboard/contracts';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { ClientSession, clientKey } from './client-session.js';
import { EdgeClient } from './edge.client.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { jittered } from './jitter.js';
import { SyncMetrics } from './sync.metrics.js';
import type { SyncSocket } from './sync-socket.js';

/**
 * The clients this replica holds: attach, detach (grace period), pushes, end. An unregister the registry
 * did not take is kept and sent again: else the client would stay registered while this replica lives.
 */
@Injectable()
export class SessionStore {
  private readonly sessions = new Map<string, ClientSession>();
  private stopping = false;
  /** Unregisters the registry has not taken yet, by client key; the least recently tried first. */
  private readonly unregisters = new Map<string, PendingUnregister>();
  private retryTimer?: NodeJS.Timeout;
  private retrying = false;
  private retryDelay: number;
  private readonly maxRetryDelay: number;
  private lostOverLimit = 0;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly edge: EdgeClient,
    private readonly metrics: SyncMetrics,
    private readonly logger: JsonLogger,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
  ) {
    this.retryDelay = config.syncUnregisterRetryMs;
    this.maxRetryDelay = Math.max(MAX_RETRY_DELAY_MS, config.syncUnregisterRetryMs);
  }

  get size(): number {
    return this.sessions.size;
  }

  get(ref: ClientRef): ClientSession | undefined {
    return this.sessions.get(clientKey(ref));
  }

  /**
   * Whether this replica has the client: a session (one whose register is awaiting its answer
   * included: it is added before the register is reported), or an unregister the registry has not
   * taken yet (an ended session's, a ghost registration's).
   */
  holds(ref: ClientRef): boolean {
    const key = clientKey(ref);
    return this.sessions.has(key) || this.unregisters.has(key);
  }

  /** An unregister of the client is pending (`settle` sends it). */
  unregistering(ref: ClientRef): boolean {
    return this.unregisters.has(clientKey(ref));
  }

  /** The sessions held right now (a copy). */
  list(): ClientSession[] {
    return [...this.sessions.values()];
  }

  add(session: ClientSession): void {
    this.sessions.set(session.key, session);
    this.metrics.sessions.set(this.sessions.size);
  }

  /** Forgets a session (only that one: a newer session of the same client stays). */
  remove(session: ClientSession): void {
    if (this.sessions.get(session.key) === session) this.sessions.delete(session.key);
    this.metrics.sessions.set(this.sessions.size);
  }

  /** Binds a socket to a session; an older socket of the same client is closed with 4009. */
  attach(session: ClientSession, socket: SyncSocket): void {
    if (session.graceTimer) clearTimeout(session.graceTimer);
    session.graceTimer = undefined;
    const previous = session.socket;
    if (previous && previous !== socket) {
      previous.session = null;
      previous.close(SYNC_CLOSE_CODES.replaced, 'another socket registered this client', 'replaced');
    }
    session.socket = socket;
    socket.session = session;
    socket.ready = false;
  }

  /** After the register result went out: pushes flow, the ones kept meanwhile first. */
  markReady(socket: SyncSocket): void {
    socket.ready = true;
    const session = socket.session;
    if (!session) return;
    const kept = session.detached;
    session.detached = [];
    for (const push of kept) this.deliver(session, push);
  }

  /**
   * What a push from the registry does to a session, whether it came over NATS (PushListener) or
   * was derived from the registry's live state after pushes were lost (SessionReconciler): the
   * change of the edge state (`ClientSession#apply`), then the `push` frame to the client;
   * `unregistered` ends the session (4010). `stale`: an older settings push, neither applied nor delivered.
   */
  push(session: ClientSession, push: ServerPush): 'delivered' | 'unregistered' | 'stale' {
    if (push.type === 'unregistered') {
      this.endByServer(session, push);
      return 'unregistered';
    }
    if (!session.apply(push)) return 'stale';
    this.deliver(session, push);
    return 'delivered';
  }

  deliver(session: ClientSession, push: ServerPush): void {
    const socket = session.socket;
    if (socket?.ready && socket.sendPush(push)) {
      this.metrics.pushes.inc({ outcome: 'delivered' });
      return;
    }
    if (this.config.syncMaxDetachedPushes === 0) {
      session.droppedPushes++;
      this.metrics.pushes.inc({ outcome: 'dropped' });
      return;
    }
    session.detached.push(push);
    this.metrics.pushes.inc({ outcome: 'kept' });
    if (session.detached.length > this.config.syncMaxDetachedPushes) {
      session.detached.shift();
      session.droppedPushes++;
      this.metrics.pushes.inc({ outcome: 'dropped' });
    }
  }

  /**
   * The socket closed: its session (if still its own) waits for a resume during the grace period, then is unregistered.
   */
  detach(socket: SyncSocket): void {
    const session = socket.session;
    socket.session = null;
    if (!session || session.socket !== socket) return;
    session.socket = null;
    if (session.ended || this.stopping) return;
    if (this.config.syncGracePeriodMs === 0) {
      void this.end(session, 'dropped');
      return;
    }
    session.graceTimer = setTimeout(() => {
      session.graceTimer = undefined;
      if (!session.socket) void this.end(session, 'dropped');
    }, this.config.syncGracePeriodMs);
    session.graceTimer.unref?.();
  }

  /**
   * Unregisters a client with the registry: closes its connections, then unregisters it. Resolves
   * after the first attempt; an unregister the registry did not take (refused, unanswered: it, Redis
   * or NATS restarting) stays pending and is sent again (see `retryPass`) until it does.
   */
  async end(session: ClientSession, reason: 'left' | 'dropped' | 'kicked'): Promise<void> {
    const pending = this.close(session, reason);
    if (pending && !(await this.attempt(pending))) this.scheduleRetry();
  }

  /**
   * Ends a session at the edge; its unregister is kept pending until the registry takes it. Undefined: ended already.
   */
  private close(session: ClientSession, reason: 'left' | 'dropped' | 'kicked'): PendingUnregister | undefined {
    if (session.ended) return undefined;
    session.ended = true;
    if (session.graceTimer) clearTimeout(session.graceTimer);
    this.remove(session);
    const client = session.ref;
    // Only while this registration holds the client (`sessionId`), as the unregister.
    const closes: EdgeReport[] = [...session.connections.values()].map((c) => ({
      kind: 'connection.close',
      client,
      channelId: c.channelId,
      connectionId: c.connectionId,
      sessionId: session.sessionId,
    }));
    session.connections.clear();
    session.channels.clear();
    const pending: PendingUnregister = {
      key: session.key,
      report: { kind: 'client.unregister', client, reason, gatewayId: this.gatewayId, sessionId: session.sessionId },
      closes,
      attempts: 0,
      after: session.corrections,
    };
    this.keep(pending);
    return pending;
  }

  /**
   * Unregisters a registration of the client through this replica that it has no session for (a
   * register whose answer was lost, see GhostRegistrations): `sessionId` that registration's
   * (absent: it names none). Kept pending like the unregister of an ended session: sent again until
   * the registry takes it, and a new session of the client waits for it (`settle`). `taken` is called
   * once the registry took it. False (nothing sent): the replica has the client now (`holds`).
   */
  unregisterGhost(client: ClientRef, sessionId: string | null, taken: () => void): boolean {
    if (this.stopping || this.holds(client)) return false;
    const pending: PendingUnregister = {
      key: clientKey(client),
      report: {
        kind: 'client.unregister',
        client,
        reason: 'dropped',
        gatewayId: this.gatewayId,
        ...(sessionId !== null ? { sessionId } : {}),
      },
      closes: [],
      attempts: 0,
      taken,
    };
    this.keep(pending);
    void this.attempt(pending).then((ok) => {
      if (!ok) this.scheduleRetry();
    });
    return true;
  }

  /** Keeps a pending unregister (the newest of the client's), within SYNC_MAX_PENDING_UNREGISTERS. */
  private keep(pending: PendingUnregister): void {
    // One per client at most: a new session of a client starts only once the previous one's unregister was taken (see
    // `settle`).
    this.unregisters.delete(pending.key);
    this.unregisters.set(pending.key, pending);
    for (const [key, oldest] of this.unregisters) {
      if (this.unregisters.size <= this.config.syncMaxPendingUnregisters) break;
      this.unregisters.delete(key);
      this.metrics.unregistersLost.inc({ reason: 'over-limit' });
      if (this.lostOverLimit++ % 1000 === 0) {
        this.logger.event(
          'error',
          'unregister forgotten: SYNC_MAX_PENDING_UNREGISTERS reached (the client stays registered until this replica stops heartbeating)',
          {
            clientId: oldest.report.client.clientId,
            sessionId: oldest.report.sessionId,
            forgotten: this.lostOverLimit,
          },
        );
      }
    }
    this.metrics.pendingUnregisters.set(this.unregisters.size);
  }

  /** Sends a pending unregister (or joins the attempt under way): true once the registry took it. */
  private attempt(pending: PendingUnregister): Promise<boolean> {
    pending.inFlight ??= this.send(pending).finally(() => {
      pending.inFlight = undefined;
    });
    return pending.inFlight;
  }

  private async send(pending: PendingUnregister): Promise<boolean> {
    const { report } = pending;
    const client = report.client;
    // The first attempt closes the connections first (one sequence: a refused report ends it); the
    // unregister alone closes what the registry still holds of them, so later attempts send only it.
    const reports = [...pending.closes, report];
    pending.closes = [];
    // After the reports a reconcile pass was sending for the session (they name the client, not
    // the session: the next session of the client, registered once this is taken, must not get them).
    const after = pending.after;
    pending.after = undefined;
    if (after) await after;
    pending.attempts++;
    const outcomes = await this.edge.sequence(reports);
    for (let i = 0; i < reports.length - 1; i++) {
      const outcome = outcomes[i]!;
      if ('error' in outcome)
        this.logger.event('warn', 'ending a client: report refused', {
          clientId: client.clientId,
          kind: reports[i]!.kind,
          reason: report.reason,
          error: outcome.error.message,
        });
    }
    let outcome = outcomes[reports.length - 1]!;
    // Skipped behind a refused connection close: the unregister goes on its own, at once.
    if ('skipped' in outcome) outcome = (await this.edge.sequence([report]))[0]!;
    // The registry answers ok to a stale unregister (another session or gateway holds the client) and to an unknown
    // client.
    if ('ok' in outcome || ('error' in outcome && outcome.error.code === 'NotFound')) {
      this.metrics.unregisterAttempts.inc({ outcome: 'ok' });
      if (this.unregisters.get(pending.key) === pending) this.unregisters.delete(pending.key);
      this.metrics.pendingUnregisters.set(this.unregisters.size);
      pending.taken?.();
      if (pending.attempts > 1)
        this.logger.event('debug', 'unregister taken by the registry after a retry', {
          clientId: client.clientId,
          sessionId: report.sessionId,
          attempts: pending.attempts,
        });
      return true;
    }
    this.metrics.unregisterAttempts.inc({ outcome: 'failed' });
    const error = 'error' in outcome ? outcome.error.message : 'not applied';
    if (pending.attempts === 1)
      this.logger.event('warn', 'unregister not taken by the registry: sent again later', {
        clientId: client.clientId,
        sessionId: report.sessionId,
        reason: report.reason,
        error,
      });
    else
      this.logger.event('debug', 'unregister not taken by the registry', {
        clientId: client.clientId,
        sessionId: report.sessionId,
        attempts: pending.attempts,
        error,
      });
    // Last in line: the others waiting get their turn first.
    if (this.unregisters.get(pending.key) === pending) {
      this.unregisters.delete(pending.key);
      this.unregisters.set(pending.key, pending);
    }
    return false;
  }

  /**
   * Before a new session of a client: its previous session's unregister, when still pending, is
   * sent now (or the attempt under way awaited). Registered first, the new session would take over
   * the old registration in the registry (its channels and connections) and make the old unregister
   * stale. Throws Unavailable when the registry does not take it: the client registers again later.
   */
  async settle(ref: ClientRef): Promise<void> {
    const pending = this.unregisters.get(clientKey(ref));
    if (!pending || (await this.attempt(pending))) return;
    this.scheduleRetry();
    throw new DomainError(
      'Unavailable',
      'The previous session of this client is not unregistered yet (the registry did not answer): register again in a moment.',
    );
  }

  private scheduleRetry(delay = jittered(this.retryDelay)): void {
    if (this.retryTimer || this.retrying || this.stopping) return;
    this.retryTimer = setTimeout(() => void this.retryPass(), delay);
    this.retryTimer.unref();
  }

  /**
   * Sends the pending unregisters again, RETRY_BATCH at a time (a few edge batch requests). While
   * the registry takes them the next pass follows at once; while it does not, the delay doubles
   * from SYNC_UNREGISTER_RETRY_MS up to MAX_RETRY_DELAY_MS.
   */
  private async retryPass(): Promise<void> {
    this.retryTimer = undefined;
    this.retrying = true;
    let result: { tried: number; ok: boolean };
    try {
      result = await this.pass(false);
    } finally {
      this.retrying = false;
    }
    if (this.stopping || result.tried === 0) return;
    this.retryDelay = result.ok ? this.config.syncUnregisterRetryMs : Math.min(this.maxRetryDelay, this.retryDelay * 2);
    this.scheduleRetry(result.ok ? 0 : jittered(this.retryDelay));
  }

  /**
   * One attempt of up to RETRY_BATCH pending unregisters that were tried before (and, with `inFlight`, joins those
   * under way).
   */
  private async pass(inFlight: boolean): Promise<{ tried: number; ok: boolean }> {
    const due: PendingUnregister[] = [];
    for (const pending of this.unregisters.values()) {
      if (pending.inFlight ? !inFlight : pending.attempts === 0) continue;
      due.push(pending);
      if (due.length >= RETRY_BATCH) break;
    }
    const taken = await Promise.all(due.map((p) => this.attempt(p)));
    return { tried: due.length, ok: taken.every(Boolean) };
  }

  /** The registry unregistered the client: tell it, close its socket (4010), report nothing back. */
  endByServer(session: ClientSession, push: Extract<ServerPush, { type: 'unregistered' }>): void {
    if (session.ended) return;
    session.ended = true;
    if (session.graceTimer) clearTimeout(session.graceTimer);
    this.remove(session);
    const socket = session.socket;
    if (socket) {
      socket.sendPush(push);
      socket.close(SYNC_CLOSE_CODES.unregistered, `unregistered: ${push.reason}`, 'unregistered');
    }
  }

  /**
   * Shutdown: no more grace periods; every client is unregistered (RETRY_BATCH at a time) while
   * the budget lasts (`deadline`); what the registry did not take stays pending (`drainUnregisters`).
   */
  async endAll(deadline: number): Promise<void> {
    this.stopping = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const all = [...this.sessions.values()].flatMap((s) => this.close(s, 'dropped') ?? []);
    for (let i = 0; i < all.length && Date.now() < deadline; i += RETRY_BATCH) {
      await beforeDeadline(Promise.all(all.slice(i, i + RETRY_BATCH).map((p) => this.attempt(p))), deadline);
    }
  }

  /**
   * Shutdown, once the sockets are closed: the pending unregisters are sent again (backing off as
   * `retryPass`) until the registry took them all or `deadline` (SHUTDOWN_TIMEOUT_MS) passes. What
   * is left then is the registry sweeper's: it drops the clients of a gateway that stopped heartbeating.
   */
  async drainUnregisters(deadline: number): Promise<void> {
    let delay = this.config.syncUnregisterRetryMs;
    while (this.unregisters.size > 0 && Date.now() < deadline) {
      const result = await beforeDeadline(this.pass(true), deadline);
      if (result && result.tried > 0 && result.ok) {
        delay = this.config.syncUnregisterRetryMs;
        continue;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(jittered(delay), deadline - Date.now()))));
      delay = Math.min(this.maxRetryDelay, delay * 2);
    }
    const left = this.unregisters.size;
    if (left === 0) return;
    this.metrics.unregistersLost.inc({ reason: 'shutdown' }, left);
    this.logger.event(
      'warn',
      'shutting down with unregisters the registry did not take: its sweeper drops these clients once this replica stops heartbeating',
      { count: left },
    );
  }
}

/** A pending unregister of an ended session (a tombstone), until the registry takes it. */
interface PendingUnregister {
  /** The client's key (clientKey): one pending unregister per client. */
  readonly key: string;
  readonly report: Extract<EdgeReport, { kind: 'client.unregister' }>;
  /** Connection closes sent before the unregister by the first attempt only. */
  closes: EdgeReport[];
  /**
   * The session's reconcile reports under way when it ended (ClientSession#corrections): the first attempt waits for
   * them.
   */
  after?: Promise<void>;
  attempts: number;
  /** Called once the registry took it. */
  taken?: () => void;
  /** The attempt under way. */
  inFlight?: Promise<boolean>;
}

/** Most pending unregisters sent in one pass. */
const RETRY_BATCH = 1000;
/** The delay between retry passes doubles up to this (or SYNC_UNREGISTER_RETRY_MS, if larger). */
const MAX_RETRY_DELAY_MS = 10000;

/** The promise's value, or undefined once `deadline` (epoch ms) passed first. */
async function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>(
    (r) => (timer = setTimeout(() => r(undefined), Math.max(0, deadline - Date.now()))),
  );
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
