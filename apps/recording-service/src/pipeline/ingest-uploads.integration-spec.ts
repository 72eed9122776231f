/**
 * IngestUploads on the jest run's real NATS (JetStream): a file put into the upload bucket as a
 * media-agent puts it (contract in recording-pipeline.ts) is taken into the work directory with its
 * name and bytes and deleted from the bucket; a missing upload and a bad file name are left alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import { RECORDING_UPLOAD_FILE_NAME, recordingUploadName, recordingUploadsBucket } from '@switchboard/contracts';
import { JsonLogger, Metrics, NatsClient } from '@switchboard/service-kit';
import { testNamespace, testServers } from '@switchboard/testing';
import type { RecordingServiceConfig } from '../config.js';
import { IngestUploads } from './ingest-uploads.js';

describe('IngestUploads', () => {
  const namespace = testNamespace('ingest-uploads');
  let nc: NatsConnection;
  let client: NatsClient;
  let bucket: ObjectStore;
  let uploads: IngestUploads;
  let dir: string;

  beforeAll(async () => {
    const url = testServers().natsUrl;
    nc = await connect({ servers: url });
    bucket = await new Objm(nc).create(recordingUploadsBucket(namespace), { storage: StorageType.File });
    client = new NatsClient({ url, namespace, requestTimeoutMs: 2000, name: 'ingest-uploads-test' }, new Metrics('t'));
    const config = { natsNamespace: namespace } as RecordingServiceConfig;
    uploads = new IngestUploads(client, config, new JsonLogger('ingest-uploads-test', 'error', () => undefined));
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-uploads-'));
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  afterAll(async () => {
    await bucket.destroy();
    await client.onApplicationShutdown();
    await nc.close();
  });

  const put = (name: string, fileName: string, bytes: Uint8Array) =>
    bucket.putBlob({ name, metadata: { [RECORDING_UPLOAD_FILE_NAME]: fileName } }, bytes);

  it('takes an upload into the work directory under its file name and deletes it from the bucket', async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => i % 251);
    await put(recordingUploadName('chrec-1', 'crec-1.audio'), 'crec-1.audio.ogg', bytes);
    const work = path.join(dir, 'app', 'channel', 'chrec-1');
    const file = await uploads.take('chrec-1', 'crec-1.audio', work);
    expect(file).toBe(path.join(work, 'crec-1.audio.ogg'));
    expect(new Uint8Array(fs.readFileSync(file!))).toEqual(bytes);
    expect(fs.readdirSync(work)).toEqual(['crec-1.audio.ogg']);
    expect(await bucket.info(recordingUploadName('chrec-1', 'crec-1.audio'))).toMatchObject({ deleted: true });
  });

  it('answers null when nothing was uploaded', async () => {
    expect(await uploads.take('chrec-2', 'crec-2.video', dir)).toBeNull();
  });

  it('leaves an upload whose file name is not <base>.<extension> where it is', async () => {
    const name = recordingUploadName('chrec-3', 'crec-3.video');
    await put(name, '../../escape.webm', new Uint8Array([1, 2, 3]));
    expect(await uploads.take('chrec-3', 'crec-3.video', dir)).toBeNull();
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(await bucket.info(name)).toMatchObject({ deleted: false, size: 3 });
  });
});
