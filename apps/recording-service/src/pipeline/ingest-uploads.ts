import { Inject, Injectable } from '@nestjs/common';
import fs from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import {
  RECORDING_UPLOAD_FILE_NAME,
  RECORDING_UPLOAD_FIRST_FRAME,
  RECORDING_UPLOAD_INTERRUPTED,
  RECORDING_UPLOAD_MODERATIONS,
  type RecordingModeration,
  RECORDING_UPLOADS_TTL_DAYS,
  recordingUploadName,
  recordingUploadsBucket,
} from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RecordingServiceConfig } from '../config.js';
import { parseModerations } from './media-times.js';

export interface UploadExtras {
  moderations: RecordingModeration[];
  /** Why the media server's recording ended before it was stopped; null when it was not cut off. */
  interrupted: string | null;
}

/**
 * The files media-agents upload (a JetStream Object Store bucket: no disk shared between the
 * media servers' pods and this service). The ingest takes a connection recording's file from
 * there into the work directory, where it then finds it as if written there, and deletes the object.
 */
@Injectable()
export class IngestUploads {
  private bucket?: Promise<ObjectStore>;
  /** First-frame times of the files taken (their upload's metadata), by path, until the probe reads them. */
  private readonly firstFrames = new Map<string, number>();
  /** Janus's moderations and the cut-off reason (the upload's metadata), by path, until the ingest applies them. */
  private readonly extras = new Map<string, UploadExtras>();

  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
  ) {}

  /** Takes the upload `<fileBase>` of a channel recording into `dir`; its path, or null when none came. */
  async take(channelRecordingId: string, fileBase: string, dir: string): Promise<string | null> {
    const name = recordingUploadName(channelRecordingId, fileBase);
    try {
      const store = await this.store();
      const info = await store.info(name);
      if (!info || info.deleted) return null;
      const fileName = info.metadata?.[RECORDING_UPLOAD_FILE_NAME] ?? '';
      // Only `<fileBase>.<ext>` is taken: the name comes from another process.
      if (!/^[A-Za-z0-9]{1,10}$/.test(fileName.slice(fileBase.length + 1)) || !fileName.startsWith(`${fileBase}.`))
        throw new Error(`the upload ${name} names no usable file (${fileName.slice(0, 100)})`);
      const result = await store.get(name);
      if (!result) return null;
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, fileName);
      await pipeline(Readable.fromWeb(result.data as WebReadableStream<Uint8Array>), createWriteStream(`${file}.part`));
      const error = await result.error;
      if (error) throw error;
      await fs.rename(`${file}.part`, file);
      const firstFrame = Number(info.metadata?.[RECORDING_UPLOAD_FIRST_FRAME]);
      if (Number.isSafeInteger(firstFrame) && firstFrame > 0) this.firstFrames.set(file, firstFrame);
      this.extras.set(file, {
        moderations: parseModerations(info.metadata?.[RECORDING_UPLOAD_MODERATIONS]),
        interrupted: info.metadata?.[RECORDING_UPLOAD_INTERRUPTED]?.slice(0, 200) ?? null,
      });
      await store.delete(name);
      return file;
    } catch (e) {
      this.logger.event('warn', 'an uploaded recording file could not be taken', { name, error: (e as Error).message });
      return null;
    }
  }

  /**
   * Unix ms of the first frame of a file taken here (the media server's clock; null when not
   * known, e.g. taken before a restart): a truer start than the recording's start timestamp.
   */
  takeFirstFrame(file: string): number | null {
    const firstFrame = this.firstFrames.get(file) ?? null;
    this.firstFrames.delete(file);
    return firstFrame;
  }

  /** What a file taken here came with besides its first frame (nothing when not known, e.g. taken before a restart). */
  takeExtras(file: string): UploadExtras {
    const extras = this.extras.get(file) ?? { moderations: [], interrupted: null };
    this.extras.delete(file);
    return extras;
  }

  private store(): Promise<ObjectStore> {
    this.bucket ??= this.nats.connection$().then((nc) =>
      new Objm(nc).create(recordingUploadsBucket(this.config.natsNamespace), {
        storage: StorageType.File,
        ttl: RECORDING_UPLOADS_TTL_DAYS * 24 * 3600 * 1e9,
      }),
    );
    this.bucket.catch(() => (this.bucket = undefined));
    return this.bucket;
  }
}
