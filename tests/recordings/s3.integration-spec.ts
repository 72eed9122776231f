/**
 * The S3-compatible storage target: with RECORDINGS_S3_* set, the move job uploads every file with a
 * SigV4-signed PUT (here to a small S3-compatible server that checks each signature and payload
 * hash), the signed URLs stream the objects back through the service (ranges included), and delete
 * removes the objects: every object under the recording's prefix, retried until the store answers.
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { waitFor } from '@switchboard/testing';
import { ffmpegAvailable } from '../../tools/media/media.mjs';
import {
  command,
  connectionEvent,
  publish,
  query,
  scopeOf,
  simConnection,
  startHarness,
  writeMediaFor,
  type Harness,
} from './harness.js';
import { startFakeS3, type FakeS3 } from './fake-s3.js';

const ORG = `org-${randomUUID()}`;
const APP = 's3-app';
const CH = 'bucket-room';
const scope = scopeOf(ORG);
const S3 = {
  bucket: 'sb-recordings',
  accessKeyId: 'TESTKEYID',
  secretAccessKey: 'test-secret-access-key',
  region: 'eu-test-1',
};

describe('recordings stored in an S3-compatible bucket', () => {
  let h: Harness;
  let s3: FakeS3;

  beforeAll(async () => {
    if (!(await ffmpegAvailable()))
      throw new Error('ffmpeg and ffprobe are required by the recording tests (apt-get install ffmpeg)');
    s3 = await startFakeS3(S3);
    h = await startHarness('s3', {
      RECORDINGS_S3_ENDPOINT: s3.url,
      RECORDINGS_S3_BUCKET: S3.bucket,
      RECORDINGS_S3_REGION: S3.region,
      RECORDINGS_S3_ACCESS_KEY_ID: S3.accessKeyId,
      RECORDINGS_S3_SECRET_ACCESS_KEY: S3.secretAccessKey,
    });
    await h.start();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await s3?.close();
  });

  it('uploads the files, serves them through signed URLs, and deletes them', async () => {
    const t0 = Date.now() - 60_000;
    const dana = simConnection({
      organizationId: ORG,
      applicationId: APP,
      channelId: CH,
      userId: 'dana',
      connectionId: 'dana-cam',
      recording: true,
    });
    await publish(h, [
      connectionEvent('connection.connected', dana, t0),
      connectionEvent('connection.closed', { ...dana, state: 'closed' }, t0 + 2000),
    ]);
    await waitFor(
      async () =>
        (await query(h, scope, { kind: 'channel.connectionRecordings.list', applicationId: APP, channelId: CH }))[0]
          ?.stopTimestamp,
      { timeoutMs: 15000 },
    );
    await writeMediaFor(h, dana);
    const [recording] = await waitFor(
      async () => {
        const list = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH });
        return list[0]?.ready ? list : null;
      },
      { timeoutMs: 30000, intervalMs: 250, description: 'the recording to become ready' },
    );
    const r = recording!;
    const c = r.connectionRecordings[0]!;
    expect(s3.rejected).toEqual([]);
    expect(r.filePath).toBe(`s3://${S3.bucket}/${r.objectKey}`);
    expect(r.recordingPath).toBe(`s3://${S3.bucket}/${encodeURIComponent(ORG)}/${APP}/${CH}/${r.id}`);
    expect(c.audioFilePath).toBe(`s3://${S3.bucket}/${c.audioObjectKey}`);
    const byText = (a: string | null, b: string | null) => (a ?? '').localeCompare(b ?? '');
    expect([...s3.objects.keys()].sort(byText)).toEqual(
      [r.objectKey, r.audioObjectKey, r.videoObjectKey, c.audioObjectKey, c.videoObjectKey].sort(byText),
    );
    expect(s3.objects.get(r.objectKey!)!.body.length).toBe(r.fileSize);
    expect(s3.objects.get(r.objectKey!)!.contentType).toBe('video/webm');
    expect(fs.existsSync(h.storageDir)).toBe(false); // nothing stored locally
    expect(fs.readdirSync(h.workDir)).toEqual([]); // work files uploaded and removed

    const url = await query(h, scope, {
      kind: 'channelRecording.url',
      applicationId: APP,
      channelId: CH,
      channelRecordingId: r.id,
    });
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/webm');
    expect(Buffer.from(await whole.arrayBuffer()).equals(s3.objects.get(r.objectKey!)!.body)).toBe(true);
    const part = await fetch(url, { headers: { Range: 'bytes=-16' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${r.fileSize! - 16}-${r.fileSize! - 1}/${r.fileSize}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(s3.objects.get(r.objectKey!)!.body.subarray(-16))).toBe(true);
    const audio = await fetch(
      await query(h, scope, {
        kind: 'management.connectionRecording.audioUrl',
        applicationId: APP,
        connectionRecordingId: c.id,
      }),
    );
    expect(audio.headers.get('content-type')).toBe('audio/ogg');
    expect(Buffer.from(await audio.arrayBuffer()).length).toBe(c.audioFileSize);

    await command(h, scope, {
      kind: 'channelRecording.delete',
      applicationId: APP,
      channelId: CH,
      channelRecordingId: r.id,
    });
    expect(s3.objects.size).toBe(0);
    expect((await fetch(url)).status).toBe(404);
    expect(s3.rejected).toEqual([]);
  }, 90_000);

  it('a move cut off after some files were uploaded is resumed by its retry: the recording becomes ready with every file', async () => {
    const channel = 'bucket-retry-room';
    const t0 = Date.now() - 60_000;
    const eli = simConnection({
      organizationId: ORG,
      applicationId: APP,
      channelId: channel,
      userId: 'eli',
      connectionId: 'eli-cam',
      recording: true,
    });
    await publish(h, [
      connectionEvent('connection.connected', eli, t0),
      connectionEvent('connection.closed', { ...eli, state: 'closed' }, t0 + 2000),
    ]);
    await waitFor(
      async () =>
        (
          await query(h, scope, { kind: 'channel.connectionRecordings.list', applicationId: APP, channelId: channel })
        )[0]?.stopTimestamp,
      { timeoutMs: 15000 },
    );
    // The first upload of the move succeeds (and its work file is removed), the second fails: the
    // step fails with the first file in the bucket but not yet recorded on the recording.
    s3.failPut(2);
    await writeMediaFor(h, eli);
    const [recording] = await waitFor(
      async () => {
        const list = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: channel });
        return list[0]?.ready ? list : null;
      },
      // Before resuming existed, every retry failed on the removed work file and the recording ended failed.
      { timeoutMs: 30000, intervalMs: 250, description: 'the recording to become ready after the failed upload' },
    );
    const r = recording!;
    const c = r.connectionRecordings[0]!;
    expect(s3.rejected).toEqual([expect.stringMatching(/^PUT .*: InjectedFailure$/)]);
    expect({
      audioReady: r.audioReady,
      videoReady: r.videoReady,
      connectionAudioReady: c.audioReady,
      connectionVideoReady: c.videoReady,
    }).toEqual({
      audioReady: true,
      videoReady: true,
      connectionAudioReady: true,
      connectionVideoReady: true,
    });
    for (const [key, size] of [
      [r.objectKey, r.fileSize],
      [r.audioObjectKey, r.audioFileSize],
      [r.videoObjectKey, r.videoFileSize],
      [c.audioObjectKey, c.audioFileSize],
      [c.videoObjectKey, c.videoFileSize],
    ] as const) {
      expect(key).toBeTruthy();
      expect(s3.objects.get(key!)?.body.length).toBe(size);
    }
    const url = await query(h, scope, {
      kind: 'channelRecording.url',
      applicationId: APP,
      channelId: channel,
      channelRecordingId: r.id,
    });
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(s3.objects.get(r.objectKey!)!.body)).toBe(true);
    expect(fs.readdirSync(h.workDir)).toEqual([]);
  }, 90_000);

  it('a delete while the store fails answers success; once the store answers again every object under the recording goes', async () => {
    const channel = 'bucket-outage-room';
    const t0 = Date.now() - 60_000;
    const fay = simConnection({
      organizationId: ORG,
      applicationId: APP,
      channelId: channel,
      userId: 'fay',
      connectionId: 'fay-cam',
      recording: true,
    });
    await publish(h, [
      connectionEvent('connection.connected', fay, t0),
      connectionEvent('connection.closed', { ...fay, state: 'closed' }, t0 + 2000),
    ]);
    await waitFor(
      async () =>
        (
          await query(h, scope, { kind: 'channel.connectionRecordings.list', applicationId: APP, channelId: channel })
        )[0]?.stopTimestamp,
      { timeoutMs: 15000 },
    );
    await writeMediaFor(h, fay);
    const [recording] = await waitFor(
      async () => {
        const list = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: channel });
        return list[0]?.ready ? list : null;
      },
      { timeoutMs: 30000, intervalMs: 250, description: 'the recording to become ready' },
    );
    const r = recording!;
    const prefix = `${r.recordingPath!.slice(`s3://${S3.bucket}/`.length)}/`;
    const under = () => [...s3.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    // An object under the recording's prefix that no row names (e.g. uploaded by a move a deletion overtook).
    s3.objects.set(`${prefix}stray.webm`, { body: Buffer.from('stray'), contentType: 'video/webm' });
    expect(under()).toHaveLength(6);

    s3.failRemovals(503);
    const ref = { applicationId: APP, channelId: channel, channelRecordingId: r.id };
    // Before, the deletion committed and then answered the store's error (and nothing removed the files later).
    await expect(command(h, scope, { kind: 'channelRecording.delete', ...ref })).resolves.toBeNull();
    expect(await query(h, scope, { kind: 'channelRecording.get', ...ref })).toMatchObject({
      deleted: true,
      url: null,
      filePath: null,
    });
    expect(under()).toHaveLength(6); // the store refused every removal so far
    await expect(command(h, scope, { kind: 'channelRecording.delete', ...ref })).resolves.toBeNull(); // again: a no-op

    s3.restore();
    // The sweeper retries the pending removal; the object no row named goes too (the prefix is listed).
    await waitFor(() => under().length === 0, {
      timeoutMs: 30000,
      description: 'every object under the deleted recording to be removed',
    });
    expect(s3.rejected.filter((x) => !x.endsWith('InjectedFailure'))).toEqual([]);
    expect(s3.rejected.some((x) => x.startsWith('DELETE '))).toBe(true);
  }, 90_000);
});
