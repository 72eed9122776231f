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

@Controller()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}

@Global()
@Module({})
export class MetricsModule {
  static forService(service: string) {
    const metrics = new Metrics(service);
    return { module: MetricsModule, controllers: [MetricsController], providers: [{ provide: Metrics, useValue: metrics }], exports: [Metrics] };
  }
}
