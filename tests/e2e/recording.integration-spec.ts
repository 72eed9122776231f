/**
 * A recording end to end: a live client over /sync, an operator turns recording on for its channel
 * (interface A PATCH with a recordingTag) and mutes it in between; runtime-registry reflects it in
 * the connection's events; recording-service opens and closes the recordings, the media-server
 * side (tools/media) writes the files, the pipeline muxes them, and the recording is served by the
 * gateway's recording routes with a signed URL that downloads the file.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  createTestDatabase,
  findApp,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { SyncClient } from '../../tools/simulator/src/index.mjs';
import { probeFile, writeConnectionMedia } from '../../tools/media/media.mjs';
import { call } from './http.js';

const run = promisify(execFile);

describe('recording across services', () => {
  const servers = testServers();
  const ns = testNamespace('recording_e2e');
  const applicationId = `app-${ns}`;
  let db: TestDatabase;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let gateway: SpawnedService;
  let key: string;
  let nc: NatsConnection;
  const h = () => ({ 'X-API-Key': key });
  const admin = (p: string) => `${gateway.url}/admin/api/v1.0/applications/${applicationId}${p}`;

  async function recordingQuery(query: Record<string, unknown>) {
    const msg = await nc.request(
      `${ns}.recording-service.v1.query`,
      JSON.stringify({
        pattern: 'recording-service.v1.query',
        id: randomUUID(),
        data: { scope: { organizationId: null, operator: true, principal: 'media-server' }, query },
      }),
      { timeout: 10000 },
    );
    const reply = JSON.parse(new TextDecoder().decode(msg.data)) as { response?: any; err?: unknown };
    if (reply.err) throw new Error(JSON.stringify(reply.err));
    return reply.response;
  }

  beforeAll(async () => {
    db = await createTestDatabase('recording_e2e');
    const dir = path.join(servers.dataDir, ns);
    const env = serviceTestEnv(ns, db.url);
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    key = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    const started = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('recording-service', {
        ...env,
        HTTP_PORT: String(await freePort()),
        RECORDINGS_URL_SECRET: 'e2e-recordings-url-secret-0123456789abcdef',
        RECORDINGS_DIR: path.join(dir, 'work'),
        RECORDINGS_STORAGE_DIR: path.join(dir, 'storage'),
      }),
    ]);
    processes.push(...started);
    management = started[0]!;
    gateway = started[2]!;
    nc = await connect({ servers: servers.natsUrl });
    assert.equal(
      (await call('POST', `${management.url}/ApplicationConfigs`, { headers: h(), body: { applicationId } })).status,
      201,
    );
  });

  afterAll(async () => {
    await nc?.close();
    await Promise.all(processes.map((p) => p.stop()));
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await db?.drop();
  });

  it('records a live connection with mutes in between, and serves a playable file', async () => {
    const configs = await call<{ value: Array<{ id: string }> }>('GET', `${management.url}/ApplicationConfigs`, {
      headers: h(),
    });
    const token = (
      await call<{ value: string }>('POST', `${management.url}/ApplicationConfigs/${configs.body.value[0]!.id}/Token`, {
        headers: h(),
        body: { userId: 'rita', deviceId: 'rita-pc', clientId: 'rita-1', channelClaims: [{ id: 'studio' }] },
      })
    ).body.value;
    const sync = await SyncClient.connect(`${gateway.url!.replace('http', 'ws')}/sync`);
    await sync.request('register', { token });
    await sync.request('join', { channelId: 'studio' });
    await sync.request('connection.open', {
      channelId: 'studio',
      type: 'peer',
      connectionId: 'cn-rita',
      tag: 'main',
      streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv', maxPixelCount: 76800 } },
    });
    for (const state of ['initializing', 'connecting', 'connected'])
      await sync.request('connection.state', { connectionId: 'cn-rita', state });

    expect(
      (
        await call('PATCH', admin('/channels/studio'), {
          headers: h(),
          body: { recording: true, recordingTag: 'take-1' },
        })
      ).status,
    ).toBe(204);
    await waitFor(
      async () =>
        (await recordingQuery({ kind: 'channel.recordings.count', applicationId, channelId: 'studio' })) === 1,
      { timeoutMs: 15000 },
    );
    expect((await call('PATCH', admin('/channels/studio'), { headers: h(), body: { audioMuted: true } })).status).toBe(
      204,
    );
    expect((await call('PATCH', admin('/channels/studio'), { headers: h(), body: { audioMuted: false } })).status).toBe(
      204,
    );
    await waitFor(
      async () => {
        const list = await recordingQuery({
          kind: 'channel.connectionRecordings.list',
          applicationId,
          channelId: 'studio',
        });
        return list[0]?.updates?.some((u: { audioMuted: boolean }) => u.audioMuted) && list[0].updates.length >= 3;
      },
      { timeoutMs: 15000 },
    );
    expect((await call('PATCH', admin('/channels/studio'), { headers: h(), body: { recording: false } })).status).toBe(
      204,
    );

    // The media-server side writes the connection's files where the service asks for them.
    const target = await waitFor(
      async () => {
        const t = await recordingQuery({
          kind: 'media.recordingTarget',
          applicationId,
          channelId: 'studio',
          connectionId: 'cn-rita',
        });
        return t.stopTimestamp ? t : undefined;
      },
      { timeoutMs: 15000 },
    );
    await writeConnectionMedia(target, { durationSeconds: 2 });

    const recordings = await waitFor(
      async () => {
        const answer = await call<Array<Record<string, any>>>('GET', admin('/channels/studio/recordings'), {
          headers: h(),
        });
        return answer.body?.[0]?.ready ? answer.body : undefined;
      },
      { timeoutMs: 60000 },
    );
    const recording = recordings[0]!;
    expect(recording).toEqual(
      expect.objectContaining({ applicationId, channelId: 'studio', tag: 'take-1', ready: true, hasAudio: true }),
    );
    const full = (
      await call<Record<string, any>>('GET', admin(`/channels/studio/recordings/${recording.id}`), { headers: h() })
    ).body;
    expect(full.connectionRecordings).toHaveLength(1);
    expect(full.connectionRecordings[0].updates.map((u: { audioMuted: boolean }) => u.audioMuted)).toEqual(
      expect.arrayContaining([true, false]),
    );

    const urlAnswer = await call<string>('GET', admin(`/channels/studio/recordings/${recording.id}/url`), {
      headers: h(),
    });
    expect(urlAnswer.status).toBe(200);
    const url = urlAnswer.body;
    const download = await fetch(url);
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(recording.fileSize);
    const file = path.join(servers.dataDir, `${ns}-download.webm`);
    (await import('node:fs')).writeFileSync(file, bytes);
    const probe = (await probeFile(file)) as { durationSeconds: number; streams: Array<{ type: string }> };
    expect(probe.streams.map((s) => s.type).sort()).toEqual(['audio', 'video']);
    // The muxed file spans the channel recording, from the moment recording was turned on to off.
    const recorded = (Date.parse(recording.stopTimestamp) - Date.parse(recording.startTimestamp)) / 1000;
    expect(Math.abs(probe.durationSeconds - recorded)).toBeLessThan(0.3);
    await sync.terminate();
  });
});
