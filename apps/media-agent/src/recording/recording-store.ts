import { createReadStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import {
  DomainError,
  RECORDING_UPLOAD_FILE_NAME,
  RECORDING_UPLOAD_FIRST_FRAME,
  RECORDING_UPLOAD_INTERRUPTED,
  RECORDING_UPLOAD_MODERATIONS,
  RECORDING_UPLOADS_TTL_DAYS,
  RecordingSubjects,
  recordingUploadName,
  recordingUploadsBucket,
  type CallerScope,
  type RecordingModeration,
  type RecordingTarget,
} from '@switchboard/contracts';
import type { NatsClient } from '@switchboard/service-kit';
import type { ConvertedFile } from './mjr-convert.js';

/** The agent asks as an operator: it serves every organization's connections. */
const AGENT_SCOPE: CallerScope = { organizationId: null, operator: true, principal: 'media-agent' };

/**
 * recording-service as the agent sees it: `media.recordingTarget` (which connection recording the
 * files are for) and the JetStream Object Store bucket the ingest takes the files from.
 */
export class RecordingStore {
  private bucket?: Promise<ObjectStore>;

  constructor(
    private readonly nats: NatsClient,
    private readonly namespace: string,
    private readonly requestTimeoutMs: number,
  ) {}

  /** The connection's current (or latest) connection recording; null when it has none (yet). */
  async target(ref: {
    applicationId: string;
    channelId: string;
    connectionId: string;
  }): Promise<RecordingTarget | null> {
    try {
      const answer = await this.nats.request(
        RecordingSubjects.query,
        {
          scope: AGENT_SCOPE,
          query: {
            kind: 'media.recordingTarget',
            applicationId: ref.applicationId,
            channelId: ref.channelId,
            connectionId: ref.connectionId,
          },
        },
        { timeoutMs: this.requestTimeoutMs },
      );
      return answer as RecordingTarget;
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound') return null;
      throw e;
    }
  }

  /** Puts a converted file where the ingest of its channel recording looks for it. */
  async upload(
    channelRecordingId: string,
    fileBase: string,
    converted: ConvertedFile,
    extra: { moderations: RecordingModeration[]; interrupted: string | null } = { moderations: [], interrupted: null },
  ): Promise<void> {
    const store = await this.store();
    const stream = Readable.toWeb(createReadStream(converted.file)) as ReadableStream<Uint8Array>;
    const metadata: Record<string, string> = { [RECORDING_UPLOAD_FILE_NAME]: path.basename(converted.file) };
    if (converted.firstFrameMs !== null) metadata[RECORDING_UPLOAD_FIRST_FRAME] = String(converted.firstFrameMs);
    if (extra.moderations.length > 0) metadata[RECORDING_UPLOAD_MODERATIONS] = JSON.stringify(extra.moderations);
    if (extra.interrupted) metadata[RECORDING_UPLOAD_INTERRUPTED] = extra.interrupted;
    await store.put({ name: recordingUploadName(channelRecordingId, fileBase), metadata }, stream);
  }

  private store(): Promise<ObjectStore> {
    this.bucket ??= this.nats.connection$().then((nc) =>
      new Objm(nc).create(recordingUploadsBucket(this.namespace), {
        storage: StorageType.File,
        ttl: RECORDING_UPLOADS_TTL_DAYS * 24 * 3600 * 1e9,
      }),
    );
    this.bucket.catch(() => (this.bucket = undefined));
    return this.bucket;
  }
}
