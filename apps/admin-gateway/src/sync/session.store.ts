import { Inject, Injectable } from '@nestjs/common';
import { SYNC_CLOSE_CODES, type ClientRef, type EdgeReport, type ServerPush } from '@switchboard/contracts';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { ClientSession, clientKey } from './client-session.js';
import { EdgeClient } from './edge.client.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { SyncMetrics } from './sync.metrics.js';
import type { SyncSocket } from './sync-socket.js';

/**
 * The clients this replica holds, and their life cycle: attach a socket (taking over from an older
 * socket of the same client), detach on a drop (grace period, then unregister), deliver pushes
 * (kept while detached, bounded), end (unregister with the registry, or on the registry's word).
 */
@Injectable()
export class SessionStore {
  private readonly sessions = new Map<string, ClientSession>();
  private stopping = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly edge: EdgeClient,
    private readonly metrics: SyncMetrics,
    private readonly logger: JsonLogger,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(ref: ClientRef): ClientSession | undefined {
    return this.sessions.get(clientKey(ref));
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

  /** The socket closed: its session (if still its own) waits for a resume during the grace period, then is unregistered. */
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
   * Unregisters a client with the registry: closes its connections, then unregisters it. Errors are
   * logged, not thrown (the registry also drops the clients of a gateway that stops heartbeating).
   */
  async end(session: ClientSession, reason: 'left' | 'dropped' | 'kicked'): Promise<void> {
    if (session.ended) return;
    session.ended = true;
    if (session.graceTimer) clearTimeout(session.graceTimer);
    this.remove(session);
    const client = session.ref;
    const reports: EdgeReport[] = [...session.connections.values()].map((c) => ({ kind: 'connection.close', client, channelId: c.channelId, connectionId: c.connectionId }));
    reports.push({ kind: 'client.unregister', client, reason, gatewayId: this.gatewayId, sessionId: session.sessionId });
    session.connections.clear();
    session.channels.clear();
    // One sequence; a report refused (logged) ends it, so the ones after it go again, one by one.
    const outcomes = await this.edge.sequence(reports);
    for (let i = 0; i < reports.length; i++) {
      const outcome = outcomes[i]!;
      if ('error' in outcome) this.logger.event('warn', 'ending a client: report refused', { clientId: client.clientId, kind: reports[i]!.kind, reason, error: outcome.error.message });
      if (!('skipped' in outcome)) continue;
      await this.edge
        .report(reports[i]!)
        .catch((e: unknown) => this.logger.event('warn', 'ending a client: report refused', { clientId: client.clientId, kind: reports[i]!.kind, reason, error: (e as Error).message }));
    }
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

  /** Shutdown: no more grace periods; every client is unregistered (a few at a time). */
  async endAll(): Promise<void> {
    this.stopping = true;
    const all = [...this.sessions.values()];
    const workers = Array.from({ length: Math.min(64, all.length) }, async () => {
      for (let s = all.pop(); s; s = all.pop()) await this.end(s, 'dropped');
    });
    await Promise.all(workers);
  }
}
