import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { Job } from 'bullmq';
import type { RecordingServiceConfig } from '../config.js';
import { IngestStep } from './ingest.step.js';
import { MoveStep } from './move.step.js';
import { MuxStep } from './mux.step.js';
import type { PipelineQueue, StepJob } from './pipeline-queues.js';
import { StepRunner } from './step-runner.js';
import { Sweeper } from './sweeper.js';

/** The worker of one queue: how many jobs it runs at once and what each job does. */
export interface QueueProcessor {
  readonly queue: PipelineQueue;
  readonly concurrency: number;
  process(job: Job, token?: string): Promise<unknown>;
}

@Injectable()
export class IngestProcessor implements QueueProcessor {
  readonly queue = 'ingest';
  readonly concurrency = 8;

  constructor(
    private readonly runner: StepRunner,
    private readonly step: IngestStep,
  ) {}

  process(job: Job<StepJob>, token?: string): Promise<string> {
    return this.runner.run(job, token, this.step);
  }
}

@Injectable()
export class MuxProcessor implements QueueProcessor {
  readonly queue = 'mux';
  readonly concurrency: number;

  constructor(
    @Inject(SERVICE_CONFIG) config: RecordingServiceConfig,
    private readonly runner: StepRunner,
    private readonly step: MuxStep,
  ) {
    this.concurrency = config.recordingsMuxConcurrency;
  }

  process(job: Job<StepJob>, token?: string): Promise<string> {
    return this.runner.run(job, token, this.step);
  }
}

@Injectable()
export class MoveProcessor implements QueueProcessor {
  readonly queue = 'move';
  readonly concurrency = 4;

  constructor(
    private readonly runner: StepRunner,
    private readonly step: MoveStep,
  ) {}

  process(job: Job<StepJob>, token?: string): Promise<string> {
    return this.runner.run(job, token, this.step);
  }
}

/** One sweep at a time in the whole deployment (a job scheduler feeds this queue). */
@Injectable()
export class SweepProcessor implements QueueProcessor {
  readonly queue = 'sweep';
  readonly concurrency = 1;

  constructor(private readonly sweeper: Sweeper) {}

  process(): Promise<void> {
    return this.sweeper.sweep();
  }
}
