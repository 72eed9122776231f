import { Injectable } from '@nestjs/common';
import { JsonLogger } from '@switchboard/service-kit';
import { DelayedError, type Job } from 'bullmq';
import { RecordingMetrics } from '../metrics.js';
import type { ChannelRecordingRow } from '../recordings/rows.js';
import { FileRemovals } from './file-removals.js';
import { PipelineQueues, STEP_OF_STAGE, type Step, type StepJob } from './pipeline-queues.js';
import { RecordingStages } from './recording-stages.js';

/** One step of the pipeline: its work, and what its last failed attempt writes down instead. */
export interface PipelineStep {
  readonly name: Step;
  run(r: ChannelRecordingRow): Promise<void>;
  fail(r: ChannelRecordingRow, message: string): Promise<void>;
}

/**
 * Runs a step's job when its recording is at that step (so a redelivered or re-queued job is
 * harmless); on the last failed attempt records the failure instead of throwing.
 */
@Injectable()
export class StepRunner {
  constructor(
    private readonly stages: RecordingStages,
    private readonly removals: FileRemovals,
    private readonly queues: PipelineQueues,
    private readonly logger: JsonLogger,
    private readonly metrics: RecordingMetrics,
  ) {}

  async run(job: Job<StepJob>, token: string | undefined, step: PipelineStep): Promise<string> {
    const name = step.name;
    const r = await this.stages.row(job.data.channelRecordingId);
    // Deleted at this step: an attempt cut off (a crash) may have stored files after the deletion's removal.
    if (r?.deleted && STEP_OF_STAGE[r.stage] === name) await this.removals.reopen(r, []);
    if (!r || r.deleted || STEP_OF_STAGE[r.stage] !== name) {
      this.logger.event('debug', `recording ${name} skipped`, {
        channelRecordingId: job.data.channelRecordingId,
        stage: r?.stage ?? null,
      });
      this.metrics.steps.inc({ step: name, outcome: 'skipped' });
      return 'skipped';
    }
    const timer = this.metrics.stepSeconds.startTimer({ step: name });
    try {
      this.logger.event('debug', `recording ${name} started`, {
        channelRecordingId: r.id,
        attempt: job.attemptsMade + 1,
      });
      await step.run(r);
      this.logger.event('info', `recording ${name} done`, { channelRecordingId: r.id });
      this.metrics.steps.inc({ step: name, outcome: 'done' });
      return 'done';
    } catch (e) {
      if (this.queues.stopSignal.aborted) {
        // Cut off by the stop (ffmpeg killed, the ingest wait ended), not failed: the step goes back
        // to the queue without using an attempt, for the next replica (or this one, restarted).
        this.logger.event('info', `recording ${name} interrupted by the stop; handed back`, {
          channelRecordingId: r.id,
        });
        this.metrics.steps.inc({ step: name, outcome: 'interrupted' });
        await job.moveToDelayed(Date.now() + 1000, token);
        throw new DelayedError();
      }
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.metrics.steps.inc({ step: name, outcome: last ? 'failed' : 'retry' });
      if (!last) throw e;
      const message = (e as Error).message.slice(0, 2000);
      this.logger.event('error', `recording ${name} failed`, { channelRecordingId: r.id, error: message });
      await step.fail(r, message);
      return 'failed';
    } finally {
      timer();
    }
  }
}
