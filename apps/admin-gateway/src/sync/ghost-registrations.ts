import { EDGE_SESSIONS_MAX_CLIENTS, type ClientRef } from '@switchboard/contracts';
import type { JsonLogger } from '@switchboard/service-kit';
import { clientKey } from './client-session.js';
import type { EdgeClient } from './edge.client.js';
import type { ReconcileTrigger } from './session-reconciler.js';
import type { SessionStore } from './session.store.js';
import type { SyncMetrics } from './sync.metrics.js';

/**
 * Registrations whose register answer was lost: undone at the edge, maybe applied by the registry,
 * and never swept while this replica heartbeats. Unregistered once two scans in a row see the same
 * one (README: reconciliation).
 */
export class GhostRegistrations {
  /** A scan is under way. */
  private scanning = false;
  /** What the last complete scan found without a session here: client key -> its sessionId (null: none). */
  private suspects = new Map<string, string | null>();
  private stopping = false;

  constructor(
    private readonly gatewayId: string,
    private readonly edge: EdgeClient,
    private readonly store: SessionStore,
    private readonly metrics: SyncMetrics,
    private readonly logger: JsonLogger,
  ) {}

  stop(): void {
    this.stopping = true;
  }

  /** Starts a scan, unless one is under way (a pass does not wait for it, nor it for a pass). */
  scan(trigger: ReconcileTrigger): void {
    if (this.scanning) return;
    this.scanning = true;
    void this.unregisterGhosts(trigger)
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

  /** Unregisters the registrations through this replica it has no session for, seen so in two scans in a row. */
  private async unregisterGhosts(trigger: ReconcileTrigger): Promise<void> {
    const candidates = await this.clientsWithoutSession();
    if (this.stopping) return;
    const seen = new Map<string, string | null>();
    const refs = [...candidates.values()];
    let unregistered = 0;
    for (let i = 0; i < refs.length && !this.stopping; i += EDGE_SESSIONS_MAX_CLIENTS) {
      const chunk = refs.slice(i, i + EDGE_SESSIONS_MAX_CLIENTS);
      const states = await this.edge.sessions(chunk);
      // Synchronously from the check to the report (SessionStore#unregisterGhost checks `holds` again).
      chunk.forEach((ref, index) => {
        const state = states[index];
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

  /** The clients the registry holds as registered through this replica that have no session here, by key. */
  private async clientsWithoutSession(): Promise<Map<string, ClientRef>> {
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
      if (this.stopping) break;
    } while (cursor !== undefined);
    return candidates;
  }
}
