import type { JsonLogger } from '@switchboard/service-kit';
import type { MjrConverter } from './mjr-convert.js';
import type { RecordingDirectory, RecordingManifest } from './recording-manifest.js';
import type { RecordingStore } from './recording-store.js';

export interface HandoverOptions {
  /** How long after its stop a recording's hand-over is retried (recording-service down, target unknown). */
  handoverTimeoutMs: number;
}

/** A target stopped this long before a recording started is an earlier one (clocks of two hosts). */
const CLOCK_SLACK_MS = 2000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

const connectionKey = (m: { applicationId: string; channelId: string; connectionId: string }) =>
  JSON.stringify([m.applicationId, m.channelId, m.connectionId]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Names a recording's files after its connection recording (`media.recordingTarget`), converts
 * them once stopped and uploads them for recording-service's ingest, retrying until it succeeds
 * or `handoverTimeoutMs` after the stop. Conversions run one at a time (CPU beside Janus).
 */
export class RecordingHandover {
  /** The connection recordings already used, by connection: a later start must get another one. */
  private readonly used = new Map<string, Set<string>>();
  /** Recordings not handed over yet, by local id (the earlier ones of a connection name theirs first). */
  private readonly known = new Map<string, RecordingManifest>();
  private readonly resolving = new Map<string, Promise<boolean>>();
  private readonly handovers = new Map<string, Promise<void>>();
  /** Connections that ended: their `used` entry goes once their last recording is handed over. */
  private readonly ended = new Set<string>();
  private converting: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly directory: RecordingDirectory,
    private readonly store: RecordingStore,
    private readonly converter: MjrConverter,
    private readonly logger: JsonLogger,
    private readonly options: HandoverOptions,
  ) {}

  /** A recording started (or found on disk): its target is asked for in the background. */
  track(manifest: RecordingManifest): void {
    this.known.set(manifest.id, manifest);
    if (manifest.target) this.usedOf(manifest).add(manifest.target.connectionRecordingId);
    void this.resolveTarget(manifest);
  }

  /** Hands a stopped recording over (once; later calls share the first). */
  handOver(manifest: RecordingManifest): Promise<void> {
    let running = this.handovers.get(manifest.id);
    if (!running) {
      running = this.run(manifest).finally(() => {
        this.handovers.delete(manifest.id);
        this.known.delete(manifest.id);
        this.prune(connectionKey(manifest));
      });
      this.handovers.set(manifest.id, running);
    }
    return running;
  }

  /** The connection ended: no later recording of it can come, so what it used is forgotten (after its hand-overs). */
  connectionEnded(ref: { applicationId: string; channelId: string; connectionId: string }): void {
    this.ended.add(connectionKey(ref));
    this.prune(connectionKey(ref));
  }

  private prune(key: string): void {
    if (!this.ended.has(key) || [...this.known.values()].some((m) => connectionKey(m) === key)) return;
    this.ended.delete(key);
    this.used.delete(key);
  }

  /** Says at start-up when recordings could not be converted (janus-pp-rec missing). */
  async checkTools(): Promise<void> {
    const problem = await this.converter.unavailable();
    if (problem) this.logger.event('error', 'recordings cannot be converted: install janus-tools', { problem });
  }

  /** Hand-overs still running (shutdown waits for them a while). */
  pending(): Promise<void>[] {
    return [...this.handovers.values()];
  }

  private async run(manifest: RecordingManifest): Promise<void> {
    const deadline = (manifest.stoppedAt ?? Date.now()) + this.options.handoverTimeoutMs;
    let delay = RETRY_MIN_MS;
    for (;;) {
      try {
        await this.attempt(manifest);
        return;
      } catch (e) {
        if (Date.now() + delay > deadline) {
          this.logger.event('error', 'recording not handed over in time; its files are dropped', {
            ...this.logRef(manifest),
            error: (e as Error).message,
          });
          await this.directory.remove(manifest.id).catch(() => undefined);
          return;
        }
        this.logger.event('warn', 'recording hand-over failed; retrying', {
          ...this.logRef(manifest),
          error: (e as Error).message,
        });
        await sleep(delay);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    }
  }

  private async attempt(manifest: RecordingManifest): Promise<void> {
    if (!(await this.resolveTarget(manifest)))
      throw new Error('recording-service has no recording of the connection (yet)');
    const target = manifest.target!;
    const mjr = await this.directory.mjrFiles(manifest.id);
    const outDir = this.directory.outputDir(manifest.id);
    const started = Date.now();
    const files = await this.exclusively(async () => ({
      audio:
        target.hasAudio && mjr.audio[0] ? await this.converter.convert(mjr.audio[0], outDir, target.audioBase) : null,
      video:
        target.hasVideo && mjr.video[0] ? await this.converter.convert(mjr.video[0], outDir, target.videoBase) : null,
    }));
    const convertMs = Date.now() - started;
    if (!files.audio && !files.video)
      this.logger.event('warn', 'a recording holds no media (did Janus write into MEDIA_RECORDINGS_DIR?)', {
        ...this.logRef(manifest),
        mjrFiles: mjr.audio.length + mjr.video.length,
      });
    const extra = { moderations: manifest.moderations ?? [], interrupted: manifest.interrupted ?? null };
    if (files.audio) await this.store.upload(target.channelRecordingId, target.audioBase, files.audio, extra);
    if (files.video) await this.store.upload(target.channelRecordingId, target.videoBase, files.video, extra);
    await this.directory.remove(manifest.id);
    this.logger.event('info', 'recording handed over', {
      ...this.logRef(manifest),
      audio: Boolean(files.audio),
      video: Boolean(files.video),
      convertMs,
      mediaMs: (manifest.stoppedAt ?? started) - manifest.startedAt,
    });
  }

  /**
   * Asks `media.recordingTarget` until it names a connection recording this connection has not
   * used yet, after the earlier recordings of the connection named theirs; while recording, and
   * up to `handoverTimeoutMs` after the stop. Resolves to whether the manifest has its target.
   */
  private resolveTarget(manifest: RecordingManifest): Promise<boolean> {
    if (manifest.target) return Promise.resolve(true);
    let running = this.resolving.get(manifest.id);
    if (!running) {
      running = this.askTarget(manifest).finally(() => this.resolving.delete(manifest.id));
      this.resolving.set(manifest.id, running);
    }
    return running;
  }

  private async askTarget(manifest: RecordingManifest): Promise<boolean> {
    let delay = RETRY_MIN_MS;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) {
        await sleep(delay);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
      const expired = manifest.stoppedAt !== null && Date.now() > manifest.stoppedAt + this.options.handoverTimeoutMs;
      if (!this.known.has(manifest.id) || expired) return false;
      if (this.earlierUnnamed(manifest)) continue;
      const target = await this.store.target(manifest).catch((e: unknown) => {
        this.logger.event('warn', 'media.recordingTarget failed', { error: (e as Error).message });
        return null;
      });
      if (!target || this.usedOf(manifest).has(target.connectionRecordingId)) continue;
      if (target.stopTimestamp !== null && target.stopTimestamp < manifest.startedAt - CLOCK_SLACK_MS) continue;
      this.usedOf(manifest).add(target.connectionRecordingId);
      manifest.target = {
        connectionRecordingId: target.connectionRecordingId,
        channelRecordingId: target.channelRecordingId,
        audioBase: target.audioBase,
        videoBase: target.videoBase,
        hasAudio: target.hasAudio,
        hasVideo: target.hasVideo,
      };
      await this.directory.save(manifest);
      return true;
    }
  }

  private earlierUnnamed(manifest: RecordingManifest): boolean {
    const key = connectionKey(manifest);
    for (const other of this.known.values())
      if (connectionKey(other) === key && other.startedAt < manifest.startedAt && !other.target) return true;
    return false;
  }

  private usedOf(manifest: RecordingManifest): Set<string> {
    const key = connectionKey(manifest);
    let used = this.used.get(key);
    if (!used) this.used.set(key, (used = new Set()));
    return used;
  }

  private exclusively<T>(work: () => Promise<T>): Promise<T> {
    const run = this.converting.then(work, work);
    this.converting = run.catch(() => undefined);
    return run;
  }

  private logRef(manifest: RecordingManifest) {
    return {
      recordingId: manifest.id,
      connectionId: manifest.connectionId,
      connectionRecordingId: manifest.target?.connectionRecordingId,
    };
  }
}
