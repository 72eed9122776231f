import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { DomainError, type MediaAgentCommandOf, type MediaAgentResults } from '@switchboard/contracts';
import type { JsonLogger } from '@switchboard/service-kit';
import { within, type JanusClient } from '../janus/janus-client.js';
import { janusFailure } from '../rooms/janus-errors.js';
import type { MediaEvents } from '../rooms/media-events.js';
import type { MediaMixers } from '../rooms/media-mixers.js';
import type { MediaRooms } from '../rooms/media-rooms.js';
import type { RecordingHandover } from './recording-handover.js';
import type { RecordingDirectory, RecordingManifest } from './recording-manifest.js';

type ConnectionRef = { applicationId: string; channelId: string; connectionId: string };

export interface MediaRecordingsOptions {
  /** The recordings directory as Janus sees it (the same directory, maybe mounted elsewhere). */
  janusDir: string;
  requestTimeoutMs: number;
  /** How long a stopping agent lets running hand-overs go on; the rest is done at its next start. */
  shutdownHandoverMs: number;
}

export const MEDIA_RECORDINGS = Symbol('MEDIA_RECORDINGS');

const connectionKey = (ref: ConnectionRef) => JSON.stringify([ref.applicationId, ref.channelId, ref.connectionId]);

/**
 * `connection.record`: Janus records a publisher's streams (VideoRoom `configure` with `record`
 * and a file name in the agent's recordings directory). A recording stops on `recording: false`,
 * when the connection ends (leave, kick, room destroyed, Janus lost) and when the agent stops;
 * its files are then handed over. Recordings an earlier run left (a crash) are finished at start.
 */
export class MediaRecordings implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The recording running per connection. */
  private readonly active = new Map<string, RecordingManifest>();
  /** The mutes Janus last applied per connection (until it ends). */
  private readonly moderatedState = new Map<string, { audioMuted?: boolean; videoMuted?: boolean }>();

  constructor(
    private readonly janus: JanusClient,
    private readonly media: { rooms: MediaRooms; mixers: MediaMixers },
    events: MediaEvents,
    private readonly directory: RecordingDirectory,
    private readonly handover: RecordingHandover,
    private readonly logger: JsonLogger,
    private readonly options: MediaRecordingsOptions,
  ) {
    events.onPublish((event) => {
      // Janus lost: nothing to ask it; its files end where it stopped writing.
      if (event.kind !== 'connection.ended') return;
      this.moderatedState.delete(connectionKey(event));
      void this.stop(event, `connection ${event.reason}`, event.reason !== 'media-server-lost').finally(() =>
        this.handover.connectionEnded(event),
      );
    });
  }

  async record(cmd: MediaAgentCommandOf<'connection.record'>): Promise<MediaAgentResults['connection.record']> {
    const key = connectionKey(cmd);
    if (!cmd.recording) {
      await this.stop(cmd, 'recording disabled');
      return { recording: false };
    }
    if (this.active.has(key)) return { recording: true };
    const handle = this.handleOf(cmd);
    if (!handle)
      throw new DomainError('NotFound', `No publisher or mixer participant '${cmd.connectionId.slice(0, 256)}' here.`);
    const ref = { applicationId: cmd.applicationId, channelId: cmd.channelId, connectionId: cmd.connectionId };
    const manifest: RecordingManifest = {
      id: randomUUID(),
      ...ref,
      startedAt: Date.now(),
      stoppedAt: null,
      target: null,
    };
    this.active.set(key, manifest);
    try {
      await this.directory.save(manifest);
      const filename = path.join(this.options.janusDir, manifest.id);
      await this.configure(handle, { record: true, filename });
    } catch (e) {
      if (this.active.get(key) === manifest) this.active.delete(key);
      await this.directory.remove(manifest.id).catch(() => undefined);
      throw janusFailure('Could not start the recording', e);
    }
    this.handover.track(manifest);
    this.logger.event('info', 'recording started', { recordingId: manifest.id, ...ref });
    return { recording: true };
  }

  /** Janus applied a moderation (or a mixer mute) at `at`: those recordings note when their media changed. */
  moderated(
    channel: { applicationId: string; channelId: string },
    { audioMuted, videoMuted }: { audioMuted?: boolean; videoMuted?: boolean },
    connectionIds: string[],
    at: number,
  ): void {
    for (const connectionId of connectionIds) {
      const key = connectionKey({ ...channel, connectionId });
      // Only what changed: a moderation restating a flag must not move an unrelated timeline entry.
      const before = this.moderatedState.get(key) ?? {};
      const change = {
        ...(audioMuted !== undefined && audioMuted !== before.audioMuted ? { audioMuted } : {}),
        ...(videoMuted !== undefined && videoMuted !== before.videoMuted ? { videoMuted } : {}),
      };
      this.moderatedState.set(key, { ...before, ...change });
      const manifest = this.active.get(key);
      if (!manifest || Object.keys(change).length === 0) continue;
      (manifest.moderations ??= []).push({ at, ...change });
      void this.directory.save(manifest).catch(() => undefined);
    }
  }

  /** Stops the connection's recording (when one runs) and hands its files over. */
  private async stop(ref: ConnectionRef, why: string, askJanus = true): Promise<void> {
    const key = connectionKey(ref);
    const manifest = this.active.get(key);
    if (!manifest) return;
    this.active.delete(key);
    // Gone from the room (left, kicked, Janus lost): Janus closed its files with the handle.
    // Janus lost: its files end where it stopped writing; the recording is marked as cut off.
    if (!askJanus) manifest.interrupted = 'media server lost';
    const handle = askJanus ? this.handleOf(ref) : undefined;
    if (handle)
      await this.configure(handle, { record: false }).catch((e: unknown) =>
        this.logger.event('warn', 'Janus did not stop a recording', { error: (e as Error).message }),
      );
    manifest.stoppedAt = Date.now();
    await this.directory.save(manifest).catch(() => undefined);
    this.logger.event('info', 'recording stopped', {
      recordingId: manifest.id,
      applicationId: manifest.applicationId,
      channelId: manifest.channelId,
      connectionId: manifest.connectionId,
      why,
    });
    void this.handover.handOver(manifest);
  }

  /**
   * A VideoRoom publisher (Janus writes `<id>-audio-<mindex>.mjr` and `-video-`), or an AudioBridge
   * participant (`<id>-audio.mjr`: what it sent, before the mix); both take `configure` with `record`.
   */
  private handleOf(ref: ConnectionRef) {
    return this.media.rooms.publisherHandle(ref) ?? this.media.mixers.participantHandle(ref);
  }

  private async configure(handle: NonNullable<ReturnType<MediaRecordings['handleOf']>>, body: Record<string, unknown>) {
    const answer = await within(
      handle.message({ request: 'configure', ...body }),
      this.options.requestTimeoutMs,
      'Janus did not answer in time',
    );
    const data = answer.plugindata?.data;
    if (data?.error !== undefined) throw new Error(typeof data.error === 'string' ? data.error : 'Janus refused');
  }

  onApplicationBootstrap(): void {
    void this.handover.checkTools();
    void this.recover().catch((e: unknown) =>
      this.logger.event('error', 'recordings of an earlier run not recovered', { error: (e as Error).message }),
    );
  }

  /**
   * Recordings an earlier run left in the directory: those it stopped are handed over; those still
   * running when it died are stopped now, once Janus ended them (the clean-up of the earlier
   * session's rooms closes their files), and handed over with what was written.
   */
  private async recover(): Promise<void> {
    await this.directory.prepare();
    const left = await this.directory.load();
    if (left.length === 0) return;
    this.logger.event('info', 'recordings of an earlier run found', { recordings: left.length });
    for (const manifest of left) this.handover.track(manifest);
    if (left.some((m) => m.stoppedAt === null)) await this.janusSettled();
    for (const manifest of left) {
      if (manifest.stoppedAt === null) manifest.interrupted = 'media-agent restarted';
      manifest.stoppedAt ??= Date.now();
      await this.directory.save(manifest);
      void this.handover.handOver(manifest);
    }
  }

  /** Janus connected and the earlier session's rooms cleaned up, or a while passed (Janus down: files final). */
  private async janusSettled(): Promise<void> {
    const wait = this.options.requestTimeoutMs * 3;
    if (!this.janus.connected)
      await within(
        new Promise<void>((resolve) => this.janus.onChange((change) => change.up && resolve())),
        wait,
        '',
      ).catch(() => undefined);
    await within(this.media.rooms.cleanedUp(), wait, '').catch(() => undefined);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.active.values()].map((m) => this.stop(m, 'media-agent stopping')));
    const pending = this.handover.pending();
    if (pending.length === 0) return;
    await within(Promise.all(pending), this.options.shutdownHandoverMs, '').catch(() =>
      this.logger.event('warn', 'recordings left to hand over at the next start', { recordings: pending.length }),
    );
  }
}
