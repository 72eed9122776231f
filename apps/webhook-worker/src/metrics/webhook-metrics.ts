import { Injectable } from '@nestjs/common';
import { Metrics } from '@switchboard/service-kit';
import { Counter, Gauge, Histogram } from 'prom-client';

export type AttemptOutcome = 'success' | 'http_error' | 'network_error' | 'timeout' | 'refused' | 'unresolved';

/** The worker's own metrics, on the service registry (served at /metrics); README "Metrics" says what each counts. */
@Injectable()
export class WebhookMetrics {
  readonly events: Counter<'outcome'>;
  readonly attempts: Counter<'source' | 'outcome'>;
  readonly deliveries: Counter<'source' | 'result'>;
  readonly retries: Counter<'source'>;
  readonly attemptDuration: Histogram<'source'>;
  readonly eventToDelivery: Histogram<never>;
  readonly jobDuration: Histogram<never>;
  readonly logWrite: Histogram<never>;
  readonly configStale: Counter<never>;
  readonly configStaleKeys: Gauge<never>;
  private queueDepthSource: (() => Promise<Record<string, number>>) | undefined;

  constructor(metrics: Metrics) {
    const registers = [metrics.registry];
    this.events = new Counter({
      name: 'webhook_events_total',
      help: 'Domain events read by the webhook worker',
      labelNames: ['outcome'],
      registers,
    });
    this.attempts = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts',
      labelNames: ['source', 'outcome'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries finished',
      labelNames: ['source', 'result'],
      registers,
    });
    this.retries = new Counter({
      name: 'webhook_delivery_retries_total',
      help: 'Webhook delivery attempts after the first',
      labelNames: ['source'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'webhook_delivery_attempt_duration_seconds',
      help: 'Duration of one webhook delivery attempt',
      labelNames: ['source'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.eventToDelivery = new Histogram({
      name: 'webhook_event_to_delivery_seconds',
      help: 'From the event timestamp to the successful delivery of the event',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'webhook_delivery_job_seconds',
      help: 'Time a delivery job spends in the processor: ordering wait, attempt, logging',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.logWrite = new Histogram({
      name: 'webhook_delivery_log_write_seconds',
      help: 'From an attempt ending to its log row (and the delivery state) committed',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.configStale = new Counter({
      name: 'webhook_config_stale_total',
      help: 'Webhook configuration lookups answered with the last configuration read, management-api being unavailable',
      registers,
    });
    this.configStaleKeys = new Gauge({
      name: 'webhook_config_stale_keys',
      help: '(application, channel) pairs whose webhooks are served from the last configuration read, management-api being unavailable',
      registers,
    });
    const queueJobs: Gauge<'state'> = new Gauge({
      name: 'webhook_queue_jobs',
      help: 'BullMQ delivery jobs per state (read at scrape time)',
      labelNames: ['state'],
      registers,
      collect: async () => {
        const counts = await this.queueDepthSource?.().catch(() => undefined);
        if (!counts) return;
        for (const [state, jobs] of Object.entries(counts)) queueJobs.set({ state }, jobs);
      },
    });
  }

  /** The queue depth gauge reads its numbers from here (set by the delivery queue). */
  setQueueDepthSource(source: () => Promise<Record<string, number>>): void {
    this.queueDepthSource = source;
  }
}
