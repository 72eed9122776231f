import { Injectable } from '@nestjs/common';
import { Metrics } from '@switchboard/service-kit';
import { Counter, Gauge } from 'prom-client';

/** Prometheus metrics of the client edge, in the service's registry. */
@Injectable()
export class SyncMetrics {
  readonly sockets: Gauge;
  readonly sessions: Gauge;
  readonly requests: Counter<'type' | 'outcome'>;
  readonly pushes: Counter<'outcome'>;
  readonly closes: Counter<'code'>;
  readonly pendingUnregisters: Gauge;
  readonly unregisterAttempts: Counter<'outcome'>;
  readonly unregistersLost: Counter<'reason'>;
  readonly reconcilePasses: Counter<'trigger' | 'outcome'>;
  readonly reconcileCorrections: Counter<'push' | 'report'>;

  constructor(metrics: Metrics) {
    const registers = [metrics.registry];
    this.sockets = new Gauge({ name: 'sync_sockets', help: 'Open /sync sockets', registers });
    this.sessions = new Gauge({
      name: 'sync_sessions',
      help: 'Registered clients held by this replica (attached or in their grace period)',
      registers,
    });
    this.requests = new Counter({
      name: 'sync_requests_total',
      help: 'Requests received over /sync',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.pushes = new Counter({
      name: 'sync_pushes_total',
      help: 'Pushes received for clients of this replica',
      labelNames: ['outcome'],
      registers,
    });
    this.closes = new Counter({
      name: 'sync_socket_closes_total',
      help: 'Sockets closed, by close code',
      labelNames: ['code'],
      registers,
    });
    this.pendingUnregisters = new Gauge({
      name: 'sync_pending_unregisters',
      help: 'Unregisters of ended sessions runtime-registry has not taken yet (being sent, or waiting for a retry)',
      registers,
    });
    this.unregisterAttempts = new Counter({
      name: 'sync_unregister_attempts_total',
      help: 'Unregisters sent to runtime-registry: ok (taken), failed (refused or unanswered: sent again later)',
      labelNames: ['outcome'],
      registers,
    });
    this.unregistersLost = new Counter({
      name: 'sync_unregisters_lost_total',
      help: 'Unregisters given up before runtime-registry took them: over-limit (SYNC_MAX_PENDING_UNREGISTERS), shutdown (left to the registry sweeper)',
      labelNames: ['reason'],
      registers,
    });
    this.reconcilePasses = new Counter({
      name: 'sync_reconcile_passes_total',
      help: 'Passes checking the clients of this replica against runtime-registry, by trigger (reconnect, periodic, retry) and outcome (ok; incomplete: some clients could not be read or were busy, checked again later)',
      labelNames: ['trigger', 'outcome'],
      registers,
    });
    this.reconcileCorrections = new Counter({
      name: 'sync_reconcile_corrections_total',
      help: "Corrections of reconcile passes: pushes derived from the registry's live state (the ones lost on the way), by push type; reports removing what the registry held and the session did not (left by a request whose answer was lost), taken by the registry, by report (leave, close); unregisters of registrations through this replica it had no session for (left by a register whose answer was lost), taken by the registry (unregister)",
      labelNames: ['push', 'report'],
      registers,
    });
  }
}
