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

  constructor(metrics: Metrics) {
    const registers = [metrics.registry];
    this.sockets = new Gauge({ name: 'sync_sockets', help: 'Open /sync sockets', registers });
    this.sessions = new Gauge({ name: 'sync_sessions', help: 'Registered clients held by this replica (attached or in their grace period)', registers });
    this.requests = new Counter({ name: 'sync_requests_total', help: 'Requests received over /sync', labelNames: ['type', 'outcome'], registers });
    this.pushes = new Counter({ name: 'sync_pushes_total', help: 'Pushes received for clients of this replica', labelNames: ['outcome'], registers });
    this.closes = new Counter({ name: 'sync_socket_closes_total', help: 'Sockets closed, by close code', labelNames: ['code'], registers });
  }
}
