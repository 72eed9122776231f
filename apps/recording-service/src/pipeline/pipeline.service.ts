import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DomainError, RuntimeSubjects, type ConnectionInfo, type DomainEvent } from '@switchboard/contracts';
import { JsonLogger, NatsClient, ReadinessService, SERVICE_CONFIG } from '@switchboard/service-kit';
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingPaths, audioBase, videoBase } from '../files/paths.js';
import { STORAGE, type StorageTarget } from '../files/storage.js';
import { EventBus } from '../lifecycle/event-bus.js';
import { LifecycleService, lockChannel } from '../lifecycle/lifecycle.service.js';
import { Outbox } from '../lifecycle/outbox.js';
import { describeContent, extractArgs, planMux, probe, runTool, type MuxInput } from '../media/ffmpeg.js';
import { CE, CNR, CR, RecordingsStore } from '../recordings/recordings.store.js';
import { channelRecordingChanges, connectionRecordingChanges, SWEEPER_ACTOR } from '../recordings/change-notices.js';
import type { ChannelRecordingRow, ConnectionRecordingRow } from '../recordings/rows.js';
import { FileRemovals } from './file-removals.js';
import { findMediaFile, pruneEmptyDirs, sizeOf, sleep } from './files.js';
import { channelRecordingEvent, readyEvents } from './recording-events.js';
import { RecordingMetrics } from '../metrics.js';

type Step = 'ingest' | 'mux' | 'move';
interface StepJob {
  channelRecordingId: string;
}

/** A move found its recording deleted (thrown to stop it; not a failure). */
class RecordingDeleted extends Error {
  constructor() {
    super('the recording was deleted while its files were being moved');
  }
}

const STEP_OF_STAGE: Record<string, Step> = { ingesting: 'ingest', muxing: 'mux', moving: 'move' };
const ATTEMPTS: Record<Step, number> = { ingest: 3, mux: 2, move: 3 };
/** The sweeper's schedule is written again every 10 sweep intervals, at least this often apart. */
const RESCHEDULE_MIN_MS = 5000;
const POLL_MS = 250;
/** Twice the default max age of the event stream. */

/** BullMQ connection options: commands must wait for a reconnect (BullMQ requires it). */
function bullConnection(url: string) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.pathname.length > 1 ? { db: Number(u.pathname.slice(1)) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

/**
 * The recording pipeline as BullMQ jobs, one queue per step (`<ns>-recording-ingest`,
 * `<ns>-recording-mux`, `<ns>-recording-move`) plus the sweeper (`<ns>-recording-sweep`, a job
 * scheduler: one sweep runs at a time in the whole deployment). Each job carries a channel
 * recording id (job id `<step>-<id>`: never queued twice) and does its step only when the recording
 * is at that `stage`, so a redelivered or re-queued job is harmless. The last failed attempt of a
 * step is written down on the recording (flags, `error`) and announced (`*.mux.failed`,
 * `*.move.failed`), never retried forever.
 */
@Injectable()
export class PipelineService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly queues = new Map<Step | 'sweep', Queue>();
  private readonly workers: Worker[] = [];
  private started = false;

  constructor(
    private readonly ds: DataSource,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    @Inject(STORAGE) private readonly storage: StorageTarget,
    private readonly store: RecordingsStore,
    private readonly lifecycle: LifecycleService,
    private readonly bus: EventBus,
    private readonly outbox: Outbox,
    private readonly nats: NatsClient,
    private readonly logger: JsonLogger,
    private readonly metrics: RecordingMetrics,
    private readonly readiness: ReadinessService,
    private readonly removals: FileRemovals,
  ) {}

  private queueName(step: Step | 'sweep'): string {
    return `${this.config.natsNamespace}-recording-${step}`;
  }

  private get prefix(): string {
    return `${this.config.redisKeyPrefix}bull`;
  }

  private queue(step: Step | 'sweep'): Queue {
    let q = this.queues.get(step);
    if (!q) {
      q = new Queue(this.queueName(step), { connection: bullConnection(this.config.redisUrl), prefix: this.prefix });
      q.on('error', (e) => this.logger.event('warn', `queue ${step}: ${e.message}`));
      this.queues.set(step, q);
    }
    return q;
  }

  async onApplicationBootstrap(): Promise<void> {
    await fs.mkdir(this.paths.workRoot, { recursive: true });
    if (this.storage.kind === 'local') await fs.mkdir(this.paths.storageRoot, { recursive: true });
    const connection = bullConnection(this.config.redisUrl);
    const make = (step: Step | 'sweep', concurrency: number, fn: (job: Job, token?: string) => Promise<unknown>) => {
      const w = new Worker(this.queueName(step), fn, { connection, prefix: this.prefix, concurrency, autorun: true });
      w.on('error', (e) => this.logger.event('warn', `worker ${step}: ${e.message}`));
      w.on('failed', (job, e) =>
        this.logger.event('warn', `job ${step} ${job?.id ?? ''} failed (attempt ${job?.attemptsMade ?? '?'})`, {
          error: e.message,
        }),
      );
      this.workers.push(w);
    };
    make('ingest', 8, (job, token) => this.step(job as Job<StepJob>, token, 'ingest', (r) => this.ingest(r)));
    make('mux', this.config.recordingsMuxConcurrency, (job, token) =>
      this.step(job as Job<StepJob>, token, 'mux', (r) => this.mux(r)),
    );
    make('move', 4, (job, token) => this.step(job as Job<StepJob>, token, 'move', (r) => this.move(r)));
    make('sweep', 1, () => this.sweep());
    this.started = true;
    this.readiness.register('event-consumer', async () => {
      if (!this.bus.attached) throw new Error('not consuming the domain event stream');
    });
    // NATS or Redis may not be up yet: keep trying in the background (readiness says so meanwhile).
    this.startup = this.startInBackground();
  }

  private stopping = false;
  /** Aborted when the service stops: the ffmpeg runs and the ingest wait in progress end at once (see step). */
  private readonly halt = new AbortController();
  private startup?: Promise<void>;
  private rescheduler?: NodeJS.Timeout;

  /** The sweeper's schedule, kept in Redis by BullMQ (one for the whole deployment). */
  private scheduleSweeps(): Promise<unknown> {
    return this.queue('sweep').upsertJobScheduler(
      'recording-sweeper',
      { every: this.config.recordingsSweepIntervalMs },
      { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: true } },
    );
  }

  private async startInBackground(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.scheduleSweeps();
        await this.queue('sweep').add(
          'sweep',
          {},
          { jobId: `sweep-startup-${process.pid}-${Date.now()}`, removeOnComplete: true, removeOnFail: true },
        );
        this.bus.start((event) => this.onEvent(event));
        // Written again now and then: a Redis that lost its data (no persistence, a failover to an
        // empty replica) would otherwise stop every sweep (expiry, removals, stalled steps) until a
        // replica restarts. Upserting an unchanged schedule changes nothing.
        this.rescheduler = setInterval(
          () => {
            this.scheduleSweeps().catch((e: unknown) =>
              this.logger.event('debug', 'sweeper schedule not written (Redis)', { error: (e as Error).message }),
            );
          },
          Math.max(RESCHEDULE_MIN_MS, 10 * this.config.recordingsSweepIntervalMs),
        );
        this.rescheduler.unref();
        return;
      } catch (e) {
        if (attempt % 10 === 1)
          this.logger.event('warn', 'job scheduler not set up yet (Redis), retrying; events wait until it is', {
            attempt,
            error: (e as Error).message,
          });
        await sleep(Math.min(5000, 200 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  private async onEvent(event: DomainEvent): Promise<void> {
    try {
      const outcome = await this.lifecycle.apply(event);
      this.metrics.events.inc({ outcome: outcome.applied ? 'applied' : outcome.relevant ? 'duplicate' : 'ignored' });
      for (const id of outcome.stoppedChannelRecordings) await this.enqueue('ingest', id);
    } catch (e) {
      this.metrics.events.inc({ outcome: 'failed' });
      throw e;
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.halt.abort();
    clearInterval(this.rescheduler);
    await this.startup;
    await this.bus.stop();
    await Promise.all(this.workers.map((w) => w.close().catch(() => undefined)));
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
  }

  async enqueue(step: Step, channelRecordingId: string): Promise<void> {
    await this.queue(step).add(step, { channelRecordingId } satisfies StepJob, {
      jobId: `${step}-${channelRecordingId}`,
      attempts: ATTEMPTS[step],
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  /**
   * Moves a channel recording to `stage` (with more columns); answers the row as it is now, or
   * undefined when the recording was deleted (a deleted recording is never changed by a step: a
   * deletion holding the row makes this wait and then find it deleted).
   */
  private async setStage(
    id: string,
    stage: string,
    fields: Record<string, unknown> = {},
    db: DataSource | EntityManager = this.ds,
  ): Promise<ChannelRecordingRow | undefined> {
    const now = Date.now();
    const sets = ['stage = $2', 'stage_changed_on = $3', 'modified_on = $3'];
    const params: unknown[] = [id, stage, now];
    for (const [column, value] of Object.entries(fields)) {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    // TypeORM answers an UPDATE ... RETURNING with [rows, affected].
    const [rows] = (await db.query(
      `UPDATE ${CR} SET ${sets.join(', ')} WHERE id = $1 AND NOT deleted RETURNING *`,
      params,
    )) as [ChannelRecordingRow[], number];
    return rows[0];
  }

  /**
   * A stage change and the events announcing it, in one transaction (the events go to the outbox,
   * so they are published if and only if the change committed); then relays them. False (nothing
   * changed, nothing announced) when the recording was deleted.
   */
  private async setStageAnnounced(
    id: string,
    stage: string,
    fields: Record<string, unknown>,
    announce: (m: EntityManager, fresh: ChannelRecordingRow) => Promise<DomainEvent[]> | DomainEvent[],
    alsoInTransaction?: (m: EntityManager) => Promise<unknown>,
  ): Promise<boolean> {
    const changed = await this.ds.transaction(async (m) => {
      const fresh = await this.setStage(id, stage, fields, m);
      if (!fresh) return false;
      await alsoInTransaction?.(m);
      await this.outbox.add(m, await announce(m, fresh));
      return true;
    });
    if (changed) this.outbox.kick();
    return changed;
  }

  /**
   * A step found its recording deleted while it ran: it stops, and what it wrote or stored since
   * the deletion's removal goes too when the deletion removed the files (`FileRemovals.reopen`).
   */
  private async deletedDuring(r: ChannelRecordingRow, step: Step, stored: string[] = []): Promise<void> {
    this.logger.event('info', `recording ${step} stopped: the recording was deleted`, { channelRecordingId: r.id });
    await this.removals.reopen(r, stored);
  }

  private async row(id: string): Promise<ChannelRecordingRow | undefined> {
    return ((await this.ds.query(`SELECT * FROM ${CR} WHERE id = $1`, [id])) as ChannelRecordingRow[])[0];
  }

  private async children(id: string, db: DataSource | EntityManager = this.ds): Promise<ConnectionRecordingRow[]> {
    return (await db.query(
      `SELECT * FROM ${CNR} WHERE channel_recording_id = $1 AND NOT deleted ORDER BY start_timestamp, id`,
      [id],
    )) as ConnectionRecordingRow[];
  }

  /** `channel.recording.mux.failed` / `move.failed` of a recording as it is now. */
  private failedEvent(
    type: 'channel.recording.mux.failed' | 'channel.recording.move.failed',
    fresh: ChannelRecordingRow,
  ): DomainEvent {
    return channelRecordingEvent(
      type,
      fresh,
      this.store.channelUrls(fresh),
      Number(fresh.stage_changed_on),
      fresh.error,
    );
  }

  /** Runs a step when the recording is at it; on the last failed attempt records the failure instead of throwing. */
  private async step(
    job: Job<StepJob>,
    token: string | undefined,
    step: Step,
    fn: (r: ChannelRecordingRow) => Promise<void>,
  ): Promise<string> {
    const r = await this.row(job.data.channelRecordingId);
    // Deleted at this step: an attempt cut off (a crash) may have stored files after the deletion's removal.
    if (r?.deleted && STEP_OF_STAGE[r.stage] === step) await this.removals.reopen(r, []);
    if (!r || r.deleted || STEP_OF_STAGE[r.stage] !== step) {
      this.logger.event('debug', `recording ${step} skipped`, {
        channelRecordingId: job.data.channelRecordingId,
        stage: r?.stage ?? null,
      });
      this.metrics.steps.inc({ step, outcome: 'skipped' });
      return 'skipped';
    }
    const timer = this.metrics.stepSeconds.startTimer({ step });
    try {
      this.logger.event('debug', `recording ${step} started`, {
        channelRecordingId: r.id,
        attempt: job.attemptsMade + 1,
      });
      await fn(r);
      this.logger.event('info', `recording ${step} done`, { channelRecordingId: r.id });
      this.metrics.steps.inc({ step, outcome: 'done' });
      return 'done';
    } catch (e) {
      if (this.halt.signal.aborted) {
        // Cut off by the stop (ffmpeg killed, the ingest wait ended), not failed: the step goes back
        // to the queue without using an attempt, for the next replica (or this one, restarted).
        this.logger.event('info', `recording ${step} interrupted by the stop; handed back`, {
          channelRecordingId: r.id,
        });
        this.metrics.steps.inc({ step, outcome: 'interrupted' });
        await job.moveToDelayed(Date.now() + 1000, token);
        throw new DelayedError();
      }
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.metrics.steps.inc({ step, outcome: last ? 'failed' : 'retry' });
      if (!last) throw e;
      const message = (e as Error).message.slice(0, 2000);
      this.logger.event('error', `recording ${step} failed`, { channelRecordingId: r.id, error: message });
      if (step === 'mux') await this.muxFailed(r, message);
      else if (step === 'move') await this.moveFailed(r, message);
      else if (!(await this.setStage(r.id, 'failed', { error: message, mux_pending: false })))
        await this.deletedDuring(r, step);
      return 'failed';
    } finally {
      timer();
    }
  }

  // ---- ingest --------------------------------------------------------------------------------

  /**
   * Waits (until `stage_changed_on + RECORDINGS_INGEST_TIMEOUT_MS`, a deadline that survives
   * restarts) for the media server's files of every connection recording, probes them, and records
   * names, paths, sizes, content and first/last frame timestamps.
   */
  private async ingest(r: ChannelRecordingRow): Promise<void> {
    const dir = this.paths.workDir(r.application_id, r.channel_id, r.id);
    const deadline = Number(r.stage_changed_on) + this.config.recordingsIngestTimeoutMs;
    let children = await this.children(r.id);
    const look = async () =>
      Promise.all(
        children.map(async (c) => ({
          c,
          audio: c.has_audio ? await findMediaFile(dir, audioBase(c.id)) : null,
          video: c.has_video ? await findMediaFile(dir, videoBase(c.id)) : null,
        })),
      );
    let found = await look();
    while (!found.every((f) => (!f.c.has_audio || f.audio) && (!f.c.has_video || f.video)) && Date.now() < deadline) {
      if (this.halt.signal.aborted) throw new Error('the service is stopping');
      await sleep(POLL_MS);
      children = await this.children(r.id);
      found = await look();
    }
    let anyFile = false;
    let allIngested = true;
    let hasAudio = false;
    let hasVideo = false;
    for (const { c, audio, video } of found) {
      const start = Number(c.start_timestamp);
      const a = audio ? await this.probeOrNull(audio) : null;
      const v = video ? await this.probeOrNull(video) : null;
      const aFirst = a ? start + Math.round(a.startSeconds * 1000) : null;
      const vFirst = v ? start + Math.round(v.startSeconds * 1000) : null;
      const ingested = (!c.has_audio || Boolean(a)) && (!c.has_video || Boolean(v));
      allIngested &&= ingested;
      anyFile ||= Boolean(a || v);
      hasAudio ||= Boolean(a);
      hasVideo ||= Boolean(v);
      await this.ds.query(
        `UPDATE ${CNR} SET ingested = $2, modified_on = $3,
           audio_file_name = COALESCE($4, audio_file_name), audio_file_path = $5, audio_file_size = $6, audio_content = $7,
           audio_first_frame_timestamp = COALESCE($8, audio_first_frame_timestamp), audio_last_frame_timestamp = COALESCE($9, audio_last_frame_timestamp),
           video_file_name = COALESCE($10, video_file_name), video_file_path = $11, video_file_size = $12, video_content = $13,
           video_first_frame_timestamp = COALESCE($14, video_first_frame_timestamp), video_last_frame_timestamp = COALESCE($15, video_last_frame_timestamp),
           video_delay = $16
         WHERE id = $1 AND NOT deleted`,
        [
          c.id,
          ingested,
          Date.now(),
          audio ? path.basename(audio) : null,
          a ? audio : null,
          a ? await sizeOf(audio!) : null,
          a ? describeContent(a, 'audio') : null,
          aFirst,
          a && aFirst !== null ? aFirst + Math.round(a.durationSeconds * 1000) : null,
          video ? path.basename(video) : null,
          v ? video : null,
          v ? await sizeOf(video!) : null,
          v ? describeContent(v, 'video') : null,
          vFirst,
          v && vFirst !== null ? vFirst + Math.round(v.durationSeconds * 1000) : null,
          aFirst !== null && vFirst !== null ? (vFirst - aFirst) / 1000 : null,
        ],
      );
    }
    if (!anyFile) {
      const failed = await this.setStageAnnounced(
        r.id,
        'failed',
        { ingested: false, mux_pending: false, error: 'no media file was written for any connection recording' },
        (_m, fresh) => (fresh.mux_enabled ? [this.failedEvent('channel.recording.mux.failed', fresh)] : []),
      );
      if (!failed) await this.deletedDuring(r, 'ingest');
      return;
    }
    const next = r.mux_enabled ? 'muxing' : 'moving';
    if (
      !(await this.setStage(r.id, next, {
        ingested: allIngested,
        has_audio: hasAudio,
        has_video: hasVideo,
        ...(next === 'moving' ? { mux_pending: false } : {}),
      }))
    ) {
      await this.deletedDuring(r, 'ingest');
      return;
    }
    await this.enqueue(r.mux_enabled ? 'mux' : 'move', r.id);
  }

  private async probeOrNull(file: string) {
    try {
      const p = await probe(this.config.ffprobePath, file);
      return p.streams.length > 0 ? p : null;
    } catch (e) {
      this.logger.event('warn', 'a recording file could not be probed; it is ignored', {
        file,
        error: (e as Error).message,
      });
      return null;
    }
  }

  // ---- mux -----------------------------------------------------------------------------------

  private async mux(r: ChannelRecordingRow): Promise<void> {
    const started = performance.now();
    const dir = this.paths.workDir(r.application_id, r.channel_id, r.id);
    const children = await this.children(r.id);
    const channelStart = Number(r.start_timestamp);
    const inputs: MuxInput[] = children
      .filter((c) => c.audio_file_path || c.video_file_path)
      .map((c) => ({
        offsetSeconds:
          (Number(c.audio_first_frame_timestamp ?? c.video_first_frame_timestamp ?? c.start_timestamp) - channelStart) /
          1000,
        audioFile: c.audio_file_path,
        videoFile: c.video_file_path,
      }));
    const duration = (Number(r.stop_timestamp ?? channelStart) - channelStart) / 1000;
    const part = path.join(dir, `${r.id}.mux.part`);
    const plan = planMux(inputs, duration, part);
    await fs.mkdir(dir, { recursive: true });
    await runTool(this.config.ffmpegPath, plan.args, { signal: this.halt.signal });
    const file = path.join(dir, `${r.id}${plan.extension}`);
    await fs.rename(part, file);
    const audioFile = plan.hasAudio ? path.join(dir, `${r.id}.audio.ogg`) : null;
    const videoFile = plan.hasVideo ? path.join(dir, `${r.id}.video.webm`) : null;
    for (const [type, out] of [
      ['audio', audioFile],
      ['video', videoFile],
    ] as const) {
      if (!out) continue;
      await runTool(this.config.ffmpegPath, extractArgs(file, type, `${out}.part`), { signal: this.halt.signal });
      await fs.rename(`${out}.part`, out);
    }
    const moving = await this.setStage(r.id, 'moving', {
      file_name: path.basename(file),
      file_path: file,
      file_size: await sizeOf(file),
      audio_file_name: audioFile ? path.basename(audioFile) : null,
      audio_file_path: audioFile,
      audio_file_size: audioFile ? await sizeOf(audioFile) : null,
      video_file_name: videoFile ? path.basename(videoFile) : null,
      video_file_path: videoFile,
      video_file_size: videoFile ? await sizeOf(videoFile) : null,
      mux_args: JSON.stringify(plan.args),
      mux_seconds: (performance.now() - started) / 1000,
      mux_pending: false,
      has_audio: plan.hasAudio,
      has_video: plan.hasVideo,
    });
    if (!moving) return this.deletedDuring(r, 'mux');
    await this.enqueue('move', r.id);
  }

  /** The channel file could not be built: say so, then still move the connection files. */
  private async muxFailed(r: ChannelRecordingRow, error: string): Promise<void> {
    const moving = await this.setStageAnnounced(
      r.id,
      'moving',
      { mux_pending: false, error: `mux failed: ${error}` },
      (_m, fresh) => [this.failedEvent('channel.recording.mux.failed', fresh)],
    );
    if (!moving) return this.deletedDuring(r, 'mux');
    await this.enqueue('move', r.id);
  }

  // ---- move ----------------------------------------------------------------------------------

  /**
   * Moves every file of the recording from the work directory to the storage target. A recording
   * deleted meanwhile stops the move (before the next upload, or at the end), and what the move
   * stored goes with the deletion's files.
   */
  private async move(r: ChannelRecordingRow): Promise<void> {
    const started = performance.now();
    const children = await this.children(r.id);
    await this.ds.query(
      `UPDATE ${CR} SET move_pending = file_path IS NOT NULL, audio_move_pending = audio_file_path IS NOT NULL, video_move_pending = video_file_path IS NOT NULL WHERE id = $1 AND NOT deleted`,
      [r.id],
    );
    await this.ds.query(
      `UPDATE ${CNR} SET audio_move_pending = audio_file_path IS NOT NULL, video_move_pending = video_file_path IS NOT NULL WHERE channel_recording_id = $1 AND NOT deleted`,
      [r.id],
    );
    const stored: string[] = [];
    const place = async (
      file: string | null,
      key: string | null,
    ): Promise<{ path: string; key: string; size: number | null; seconds: number } | null> => {
      if (!file) return null;
      const t = performance.now();
      if (this.storage.holds(file) && key) return { path: file, key, size: null, seconds: 0 }; // moved by an earlier attempt
      if ((await this.row(r.id))?.deleted) throw new RecordingDeleted();
      const put = await this.storage.put(
        file,
        this.paths.objectKey(r.organization_id, r.application_id, r.channel_id, r.id, path.basename(file)),
      );
      stored.push(put.location);
      return { path: put.location, key: put.key, size: put.size, seconds: (performance.now() - t) / 1000 };
    };
    try {
      await this.moveFiles(r, children, place, started);
    } catch (e) {
      if (!(e instanceof RecordingDeleted)) throw e;
      await this.deletedDuring(r, 'move', stored);
      return;
    }
    await pruneEmptyDirs(this.paths.workDir(r.application_id, r.channel_id, r.id), this.paths.workRoot);
  }

  private async moveFiles(
    r: ChannelRecordingRow,
    children: ConnectionRecordingRow[],
    place: (
      file: string | null,
      key: string | null,
    ) => Promise<{ path: string; key: string; size: number | null; seconds: number } | null>,
    started: number,
  ): Promise<void> {
    const main = await place(r.file_path, r.object_key);
    const audio = await place(r.audio_file_path, r.audio_object_key);
    const video = await place(r.video_file_path, r.video_object_key);
    for (const c of children) {
      const ca = await place(c.audio_file_path, c.audio_object_key);
      const cv = await place(c.video_file_path, c.video_object_key);
      await this.ds.query(
        `UPDATE ${CNR} SET audio_file_path = $2, audio_object_key = $3, audio_file_size = COALESCE($4, audio_file_size), audio_move_seconds = COALESCE($5, audio_move_seconds),
           audio_ready = $6, audio_move_pending = false,
           video_file_path = $7, video_object_key = $8, video_file_size = COALESCE($9, video_file_size), video_move_seconds = COALESCE($10, video_move_seconds),
           video_ready = $11, video_move_pending = false, modified_on = $12
         WHERE id = $1 AND NOT deleted`,
        [
          c.id,
          ca?.path ?? null,
          ca?.key ?? null,
          ca?.size ?? null,
          ca?.seconds ?? null,
          Boolean(ca),
          cv?.path ?? null,
          cv?.key ?? null,
          cv?.size ?? null,
          cv?.seconds ?? null,
          Boolean(cv),
          Date.now(),
        ],
      );
    }
    const moved = {
      file_path: main?.path ?? null,
      object_key: main?.key ?? null,
      file_size: main?.size ?? r.file_size,
      audio_file_path: audio?.path ?? null,
      audio_object_key: audio?.key ?? null,
      audio_file_size: audio?.size ?? r.audio_file_size,
      audio_move_seconds: audio?.seconds ?? null,
      video_file_path: video?.path ?? null,
      video_object_key: video?.key ?? null,
      video_file_size: video?.size ?? r.video_file_size,
      video_move_seconds: video?.seconds ?? null,
      move_seconds: (performance.now() - started) / 1000,
      move_pending: false,
      audio_move_pending: false,
      video_move_pending: false,
      ready: Boolean(main),
      audio_ready: Boolean(audio),
      video_ready: Boolean(video),
      recording_path: this.storage.recordingPath(
        this.paths.recordingPrefix(r.organization_id, r.application_id, r.channel_id, r.id),
      ),
    };
    // Without muxing there is no channel file: the recording is done (its connection files are
    // ready) but not `ready` itself. With muxing, a missing channel file is a failure.
    if (
      !(await this.setStageAnnounced(r.id, main || !r.mux_enabled ? 'ready' : 'failed', moved, (m, fresh) =>
        this.readyEvents(m, fresh),
      ))
    )
      throw new RecordingDeleted();
  }

  /** The `*.ready` events of a moved recording and of its connection recordings (one moment: its stage change). */
  private async readyEvents(m: EntityManager, r: ChannelRecordingRow): Promise<DomainEvent[]> {
    return readyEvents(r, await this.children(r.id, m), {
      channel: (x) => this.store.channelUrls(x),
      connection: (c) => this.store.connectionUrls(c),
    });
  }

  private async moveFailed(r: ChannelRecordingRow, error: string): Promise<void> {
    const failed = await this.setStageAnnounced(
      r.id,
      'failed',
      { move_pending: false, audio_move_pending: false, video_move_pending: false, error: `move failed: ${error}` },
      (_m, fresh) => [this.failedEvent('channel.recording.move.failed', fresh)],
      (m) =>
        m.query(
          `UPDATE ${CNR} SET audio_move_pending = false, video_move_pending = false WHERE channel_recording_id = $1 AND NOT deleted`,
          [r.id],
        ),
    );
    if (!failed) await this.deletedDuring(r, 'move');
  }

  // ---- delete --------------------------------------------------------------------------------

  /**
   * Marks a stopped channel recording and its connection recordings deleted; with `removeFiles`
   * removes every file (work directory and storage target): the removal is recorded in the
   * transaction of the deletion (`recording.file_removal`) and tried once it committed; when the
   * storage target fails it stays pending and the sweeper retries it, so the deletion succeeds
   * either way and no file is left behind for good. Returns false when it already was deleted.
   * `expired`: the sweeper deletes it; `channel.recording.expired` goes out with the deletion.
   * The change records of the deletion (`deleted`, `deletedOn`, `deletedBy`) go to the change
   * outbox in the same transaction, naming `changedBy` (the caller; the sweeper by default).
   */
  async deleteRecording(
    id: string,
    actor: string | null,
    removeFiles: boolean,
    expired = false,
    changedBy: string = SWEEPER_ACTOR,
  ): Promise<boolean> {
    const now = Date.now();
    const done = await this.ds.transaction(async (m) => {
      const [peek] = (await m.query(`SELECT application_id, channel_id FROM ${CR} WHERE id = $1`, [id])) as Array<{
        application_id: string;
        channel_id: string;
      }>;
      if (!peek) return null;
      await lockChannel(m, peek.application_id, peek.channel_id);
      const [r] = (await m.query(`SELECT * FROM ${CR} WHERE id = $1 FOR UPDATE`, [id])) as ChannelRecordingRow[];
      if (!r || r.deleted) return null;
      if (r.stop_timestamp === null)
        throw new DomainError(
          'Conflict',
          'The channel recording is still recording; it can be deleted once it stopped.',
        );
      const fileReset = removeFiles
        ? `, ready = false, audio_ready = false, video_ready = false, file_path = NULL, audio_file_path = NULL, video_file_path = NULL,
             file_size = NULL, audio_file_size = NULL, video_file_size = NULL, move_pending = false, audio_move_pending = false, video_move_pending = false, mux_pending = false`
        : '';
      const [[fresh]] = (await m.query(
        `UPDATE ${CR} SET deleted = true, deleted_on = $2, deleted_by = $3, modified_on = $2, modified_by = COALESCE($3, modified_by)${fileReset} WHERE id = $1 RETURNING *`,
        [id, now, actor],
      )) as [ChannelRecordingRow[], number];
      const childReset = removeFiles
        ? `, audio_ready = false, video_ready = false, audio_file_path = NULL, video_file_path = NULL, audio_file_size = NULL, video_file_size = NULL,
             audio_move_pending = false, video_move_pending = false`
        : '';
      const children = (await m.query(`SELECT * FROM ${CNR} WHERE channel_recording_id = $1`, [
        id,
      ])) as ConnectionRecordingRow[];
      const deletedChildren = (await m.query(
        `UPDATE ${CNR} SET deleted = true, deleted_on = $2, deleted_by = $3, modified_on = $2${childReset} WHERE channel_recording_id = $1 AND NOT deleted RETURNING *`,
        [id, now, actor],
      )) as [ConnectionRecordingRow[], number];
      if (removeFiles) {
        const locations = [
          r.file_path,
          r.audio_file_path,
          r.video_file_path,
          ...children.flatMap((c) => [c.audio_file_path, c.video_file_path]),
        ].filter((l): l is string => Boolean(l));
        await this.removals.schedule(m, r, locations);
      }
      await this.outbox.addChanges(m, [
        ...channelRecordingChanges('Delete', r, fresh!, changedBy, now),
        ...connectionRecordingChanges(children, deletedChildren[0], changedBy, now),
      ]);
      if (expired)
        await this.outbox.add(m, [
          channelRecordingEvent(
            'channel.recording.expired',
            fresh!,
            { url: null, audioUrl: null, videoUrl: null },
            now,
          ),
        ]);
      return true;
    });
    if (!done) return false;
    this.outbox.kick();
    if (removeFiles) await this.removals.run(id);
    return true;
  }

  // ---- sweeper -------------------------------------------------------------------------------

  /**
   * Expired recordings, pending file removals, orphaned connection recordings, stalled pipeline steps, old processed
   * event ids.
   */
  async sweep(): Promise<void> {
    if (!this.started) return;
    await this.expire();
    await this.removals.runDue();
    await this.closeOrphans();
    await this.resumeStalled();
    // Ids of events older than the stream keeps them cannot come back (nor can the connects the
    // ends remembered were kept for); with an unlimited or unreadable stream, none is forgotten.
    const horizon = await this.bus.redeliveryHorizonMs();
    if (horizon !== null) {
      await this.ds.query(`DELETE FROM recording.processed_event WHERE processed_on < $1`, [Date.now() - horizon]);
      await this.ds.query(`DELETE FROM ${CE} WHERE created_on < $1`, [Date.now() - horizon]);
    }
  }

  private async expire(): Promise<void> {
    const rows = (await this.ds.query(
      `SELECT * FROM ${CR} WHERE NOT deleted AND expiry_timestamp IS NOT NULL AND expiry_timestamp <= $1 AND stage IN ('ready', 'failed') ORDER BY expiry_timestamp LIMIT 100`,
      [Date.now()],
    )) as ChannelRecordingRow[];
    for (const r of rows) {
      if (!(await this.deleteRecording(r.id, null, true, true))) continue;
      this.logger.event('info', 'channel recording expired and deleted', { channelRecordingId: r.id });
      this.metrics.sweeps.inc({ what: 'expired' });
    }
  }

  private async closeOrphans(): Promise<void> {
    // Until the consumer caught up, silence may only mean unread events.
    const backlog = await this.bus.backlog().catch(() => Number.POSITIVE_INFINITY);
    if (backlog > 0) return;
    const cutoff = Date.now() - this.config.recordingsOrphanTimeoutMs;
    const rows = (await this.ds.query(
      `SELECT * FROM ${CNR} WHERE stop_timestamp IS NULL AND last_seen_on < $1 ORDER BY last_seen_on LIMIT 100`,
      [cutoff],
    )) as ConnectionRecordingRow[];
    for (const c of rows) {
      const alive = await this.runtimeRecords(c);
      if (alive) {
        await this.lifecycle.touch(c.id);
        continue;
      }
      const outcome = await this.lifecycle.closeOrphan(
        c.id,
        `no event for ${Math.round(this.config.recordingsOrphanTimeoutMs / 1000)} s and the runtime does not record the connection`,
      );
      this.logger.event('warn', 'closed an orphaned connection recording', {
        connectionRecordingId: c.id,
        connectionId: c.connection_id,
      });
      this.metrics.sweeps.inc({ what: 'orphaned' });
      for (const id of outcome.stoppedChannelRecordings) await this.enqueue('ingest', id);
    }
  }

  /** Whether the runtime still has the connection, recording. Unknown (runtime unreachable) counts as no. */
  private async runtimeRecords(c: ConnectionRecordingRow): Promise<boolean> {
    try {
      const info = (await this.nats.request(
        RuntimeSubjects.query,
        {
          scope: { organizationId: null, operator: true, principal: 'recording-service' },
          query: {
            kind: 'connection.get',
            applicationId: c.application_id,
            channelId: c.channel_id,
            userId: c.user_id,
            deviceId: c.device_id,
            clientId: c.client_id,
            connectionId: c.connection_id,
          },
        },
        { timeoutMs: 2000 },
      )) as ConnectionInfo | null;
      return Boolean(info && info.recording && info.state !== 'closed' && info.state !== 'failed');
    } catch {
      return false;
    }
  }

  private async resumeStalled(): Promise<void> {
    const cutoff = Date.now() - this.config.recordingsIngestTimeoutMs - 60000;
    const rows = (await this.ds.query(
      `SELECT id, stage FROM ${CR} WHERE stage IN ('ingesting', 'muxing', 'moving') AND NOT deleted AND stage_changed_on < $1 LIMIT 100`,
      [cutoff],
    )) as Array<{
      id: string;
      stage: string;
    }>;
    for (const r of rows) {
      await this.enqueue(STEP_OF_STAGE[r.stage]!, r.id);
      this.metrics.sweeps.inc({ what: 'resumed' });
    }
  }
}
