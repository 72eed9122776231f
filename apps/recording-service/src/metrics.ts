import { Injectable } from '@nestjs/common';
import { Metrics } from '@switchboard/service-kit';
import { Counter, Histogram } from 'prom-client';

/** The service's own Prometheus metrics, on the process registry (`/metrics`). */
@Injectable()
export class RecordingMetrics {
  readonly events: Counter<'outcome'>;
  readonly steps: Counter<'step' | 'outcome'>;
  readonly stepSeconds: Histogram<'step'>;
  readonly sweeps: Counter<'what'>;
  readonly fileRemovals: Counter<'outcome'>;

  constructor(metrics: Metrics) {
    const registers = [metrics.registry];
    this.events = new Counter({
      name: 'recording_domain_events_total',
      help: 'Domain events taken from the event stream, by outcome (applied, duplicate, ignored, failed)',
      labelNames: ['outcome'],
      registers,
    });
    this.steps = new Counter({
      name: 'recording_pipeline_steps_total',
      help: 'Pipeline steps (ingest, mux, move) by outcome (done, skipped, retry, failed, interrupted: cut off by a stop and handed back)',
      labelNames: ['step', 'outcome'],
      registers,
    });
    this.stepSeconds = new Histogram({
      name: 'recording_pipeline_step_seconds',
      help: 'Duration of pipeline steps',
      labelNames: ['step'],
      buckets: [0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.sweeps = new Counter({
      name: 'recording_sweeper_actions_total',
      help: 'What the sweeper did: expired (deleted), orphaned (closed), resumed (stalled step re-queued)',
      labelNames: ['what'],
      registers,
    });
    this.fileRemovals = new Counter({
      name: 'recording_file_removals_total',
      help: 'Attempts at removing the files of deleted recordings, by outcome (done, failed; stuck: a removal failed 8 times in a row and is still retried)',
      labelNames: ['outcome'],
      registers,
    });
  }
}
