import { Controller, Get, Global, Header, Module } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process; every service labels its metrics with `service`. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly natsRequestDuration: Histogram<'subject' | 'outcome'>;
  readonly natsHandled: Counter<'subject' | 'outcome'>;
  readonly natsRequestsShared: Counter<'subject'>;

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.natsRequestDuration = new Histogram({
      name: 'nats_request_duration_seconds',
      help: 'Duration of NATS requests this service made',
      labelNames: ['subject', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [this.registry],
    });
    this.natsRequestsShared = new Counter({
      name: 'nats_requests_shared_total',
      help: 'Reads answered by an identical request of the same event-loop turn instead of a request of their own',
      labelNames: ['subject'],
      registers: [this.registry],
    });
    this.natsHandled = new Counter({
      name: 'nats_requests_handled_total',
      help: 'NATS requests this service answered',
      labelNames: ['subject', 'outcome'],
      registers: [this.registry],
    });
  }
}

/** The content type of `/metrics` (Prometheus text format 0.0.4). */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

@Controller()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get('metrics')
  @Header('Content-Type', METRICS_CONTENT_TYPE)
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}

@Global()
@Module({})
export class MetricsModule {
  /** `routes: false`: the registry without its `/metrics` route (served on OPS_PORT, see ops-server). */
  static forService(service: string, routes = true) {
    const metrics = new Metrics(service);
    return {
      module: MetricsModule,
      controllers: routes ? [MetricsController] : [],
      providers: [{ provide: Metrics, useValue: metrics }],
      exports: [Metrics],
    };
  }
}
