/**
 * Recordings end to end: simulated clients (EventInfo-shaped domain events on JetStream, as the
 * runtime publishes them) record a few seconds with mutes in between; the media server side
 * (tools/media) writes real audio and video files; recording-service ingests, muxes (ffmpeg) and
 * moves them. The channel recording becomes ready with a playable file of the expected duration
 * and streams, every read of interface A and B answers over NATS, a signed URL downloads the file,
 * and an expiry patch lets the sweeper delete it with its files.
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type {
  ChannelRecording,
  ConnectionRecording,
  DomainEvent,
  MuxJson,
  RecordingQueryKind,
} from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import { decodeFile, ffmpegAvailable, probeFile } from '../../tools/media/media.mjs';
import {
  command,
  connectionEvent,
  natsRequest,
  OPERATOR,
  publish,
  query,
  RequestFailed,
  scopeOf,
  simConnection,
  startHarness,
  watchEvents,
  writeMediaFor,
  type Harness,
  type SimConnection,
} from './harness.js';

const ORG = `org-${randomUUID()}`;
const OTHER_ORG = `org-${randomUUID()}`;
const APP = 'rec-app';
const CH = 'town-hall';
const CH2 = 'side-room';
const scope = scopeOf(ORG);
const stranger = scopeOf(OTHER_ORG);

describe('recordings end to end', () => {
  let h: Harness;
  let watched: { events: DomainEvent[] };
  // Simulated session, 2 minutes ago (event timestamps drive every recorded time).
  const t0 = Date.now() - 120_000;
  const alice = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH,
    userId: 'alice',
    connectionId: 'alice-cam',
    tag: 'camera',
    recording: true,
    recordingTag: 'weekly',
  });
  const bob = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH,
    userId: 'bob',
    connectionId: 'bob-cam',
    recording: true,
    recordingTag: 'weekly',
  });
  const carol = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH2,
    userId: 'carol',
    connectionId: 'carol-mic',
    hasVideo: false,
    recording: true,
  });
  let recording: ChannelRecording;
  let audioOnly: ChannelRecording;

  const at = (
    c: SimConnection,
    type: Parameters<typeof connectionEvent>[0],
    ms: number,
    change: Partial<SimConnection> = {},
  ) => {
    Object.assign(c, change);
    return connectionEvent(type, c, t0 + ms);
  };

  beforeAll(async () => {
    if (!(await ffmpegAvailable()))
      throw new Error('ffmpeg and ffprobe are required by the recording tests (apt-get install ffmpeg)');
    h = await startHarness('recordings');
    watched = watchEvents(h);
    await h.start();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('records two clients with mutes in between, and an audio-only client in another channel', async () => {
    await publish(h, [
      at(alice, 'connection.connected', 0),
      at(bob, 'connection.connected', 500),
      at(alice, 'connection.updated', 1000, { audioMuted: true }),
      at(alice, 'connection.stats', 1200), // no change: no update entry
      at(bob, 'connection.updated', 1500, { videoMuted: true }),
      at(alice, 'connection.updated', 2000, { audioMuted: false }),
      at(bob, 'connection.updated', 2500, { videoMuted: false }),
      at(bob, 'connection.closed', 3500, { state: 'closed' }),
      at(alice, 'connection.updated', 4000, { recording: false }), // recording disabled: alice stops
      at(alice, 'connection.closed', 4500, { state: 'closed' }),
      at(carol, 'connection.connected', 10_000),
      at(carol, 'connection.updated', 11_000, { audioMuted: true }),
      at(carol, 'connection.closed', 12_000, { state: 'closed' }),
    ]);
    // Both recordings of the town hall stop; the media server side then writes the files.
    await waitFor(
      async () => {
        const list = await query(h, scope, {
          kind: 'channel.connectionRecordings.list',
          applicationId: APP,
          channelId: CH,
        });
        return list.length === 2 && list.every((c) => c.stopTimestamp !== null);
      },
      { timeoutMs: 20000, description: 'both connection recordings to stop' },
    );
    await Promise.all([writeMediaFor(h, alice, 440), writeMediaFor(h, bob, 660)]);
    await waitFor(
      async () =>
        (await query(h, scope, { kind: 'channel.connectionRecordings.list', applicationId: APP, channelId: CH2 }))[0]
          ?.stopTimestamp,
      {
        timeoutMs: 20000,
        description: "carol's recording to stop",
      },
    );
    await writeMediaFor(h, carol, 550);

    recording = await waitFor(
      async () => {
        const [r] = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH });
        return r?.ready ? r : null;
      },
      { timeoutMs: 60000, intervalMs: 250, description: 'the town hall recording to become ready' },
    );
    audioOnly = await waitFor(
      async () =>
        (await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH2 })).find(
          (r) => r.ready,
        ),
      {
        timeoutMs: 60000,
        intervalMs: 250,
        description: 'the side room recording to become ready',
      },
    );
  }, 150_000);

  it('the channel recording is ready with a playable file of the expected duration and streams', async () => {
    expect(recording).toMatchObject({
      applicationId: APP,
      channelId: CH,
      tag: 'weekly',
      startTimestamp: new Date(t0).toISOString(),
      stopTimestamp: new Date(t0 + 4000).toISOString(),
      ready: true,
      audioReady: true,
      videoReady: true,
      hasAudio: true,
      hasVideo: true,
      ingested: true,
      muxPending: false,
      movePending: false,
      deleted: false,
      muxEnabled: true,
      deleteFiles: true,
      expiryTimestamp: null,
    });
    expect(recording.fileSize).toBeGreaterThan(1000);
    expect(recording.filePath!.startsWith(h.storageDir)).toBe(true);
    expect(recording.objectKey).toBe(`${encodeURIComponent(ORG)}/${APP}/${CH}/${recording.id}/${recording.id}.webm`);
    expect(recording.fileName).toBe(`${recording.id}.webm`);
    expect(recording.filePath).toBe(`${h.storageDir}/${recording.objectKey}`);
    expect(recording.muxArgs).toEqual(expect.arrayContaining(['-filter_complex']));
    expect(recording.url).toMatch(/\/files\//);

    const probed = await probeFile(recording.filePath!);
    expect(probed.durationSeconds).toBeGreaterThan(3.7);
    expect(probed.durationSeconds).toBeLessThan(4.3);
    expect(probed.streams.map((s) => `${s.type}:${s.codec}`).sort()).toEqual(['audio:opus', 'video:vp8']);
    expect(probed.streams.find((s) => s.type === 'video')).toMatchObject({ width: 640, height: 240 }); // two tiles side by side
    await decodeFile(recording.filePath!);

    const audio = await probeFile(recording.audioFilePath!);
    expect(audio.streams.map((s) => s.type)).toEqual(['audio']);
    const video = await probeFile(recording.videoFilePath!);
    expect(video.streams.map((s) => s.type)).toEqual(['video']);

    const side = await probeFile(audioOnly.filePath!);
    expect(side.streams.map((s) => `${s.type}:${s.codec}`)).toEqual(['audio:opus']);
    expect(side.durationSeconds).toBeGreaterThan(1.7);
    expect(side.durationSeconds).toBeLessThan(2.3);
    expect(audioOnly).toMatchObject({ hasVideo: false, videoReady: false, videoUrl: null, ready: true });
  });

  it('its connection recordings carry the mute updates, frame timestamps and files', () => {
    const byUser = (u: string) => recording.connectionRecordings.find((c) => c.userId === u)!;
    const a = byUser('alice');
    const b = byUser('bob');
    expect(recording.connectionRecordings).toHaveLength(2);
    expect(a.updates.map((u) => [u.index, u.timestamp, u.audioMuted, u.videoMuted])).toEqual([
      [0, new Date(t0).toISOString(), false, false],
      [1, new Date(t0 + 1000).toISOString(), true, false],
      [2, new Date(t0 + 2000).toISOString(), false, false],
    ]);
    expect(a.updates.every((u) => u.connectionTag === 'camera' && u.connectionRecordingId === a.id)).toBe(true);
    expect(b.updates.map((u) => [u.index, u.audioMuted, u.videoMuted])).toEqual([
      [0, false, false],
      [1, false, true],
      [2, false, false],
    ]);
    expect(a).toMatchObject({
      channelRecordingId: recording.id,
      connectionId: 'alice-cam',
      connectionTag: 'camera',
      connectionType: 'sfu',
      tag: 'weekly',
      startTimestamp: new Date(t0).toISOString(),
      stopTimestamp: new Date(t0 + 4000).toISOString(),
      audioFirstFrameTimestamp: new Date(t0).toISOString(),
      videoFirstFrameTimestamp: new Date(t0).toISOString(),
      hasAudio: true,
      hasVideo: true,
      ingested: true,
      audioReady: true,
      videoReady: true,
      audioMovePending: false,
      videoMovePending: false,
      audioFileName: `${a.id}.audio.ogg`,
      videoFileName: `${a.id}.video.webm`,
    });
    expect(Date.parse(a.audioLastFrameTimestamp!) - t0).toBeGreaterThan(3900);
    expect(a.audioContent).toContain('opus');
    expect(a.videoContent).toContain('vp8');
    expect(a.audioUrl).toMatch(/\/files\//);
    expect(b).toMatchObject({
      startTimestamp: new Date(t0 + 500).toISOString(),
      stopTimestamp: new Date(t0 + 3500).toISOString(),
    });
    expect(audioOnly.connectionRecordings[0]!.updates.map((u) => u.audioMuted)).toEqual([false, true]);
  });

  it('answers every interface A read over NATS', async () => {
    const ids = (list: Array<{ id: string }>) => list.map((x) => x.id).sort();
    const a = recording.connectionRecordings.find((c) => c.userId === 'alice')!;
    const aliceRef = { userId: 'alice', deviceId: alice.deviceId, clientId: alice.clientId };
    const r = { applicationId: APP, channelId: CH, channelRecordingId: recording.id };
    const allConnections = [...recording.connectionRecordings, ...audioOnly.connectionRecordings]
      .map((c) => c.id)
      .sort();

    // Channel recordings: lists newest first, counts, windows, paging.
    const appList = await query(h, scope, { kind: 'channelRecordings.list', applicationId: APP });
    expect(appList.map((x) => x.id)).toEqual([audioOnly.id, recording.id]);
    expect(await query(h, scope, { kind: 'channelRecordings.count', applicationId: APP })).toBe(2);
    expect(await query(h, scope, { kind: 'channel.recordings.count', applicationId: APP, channelId: CH })).toBe(1);
    const t0s = Math.floor(t0 / 1000);
    expect(await query(h, scope, { kind: 'channelRecordings.count', applicationId: APP, timestampMin: t0s + 5 })).toBe(
      1,
    );
    expect(await query(h, scope, { kind: 'channelRecordings.count', applicationId: APP, timestampMax: t0s + 5 })).toBe(
      1,
    );
    expect(
      (await query(h, scope, { kind: 'channelRecordings.list', applicationId: APP, skip: 1, take: 1 })).map(
        (x) => x.id,
      ),
    ).toEqual([recording.id]);
    expect(await query(h, scope, { kind: 'channelRecordings.list', applicationId: APP, take: 0 })).toEqual([]);
    expect((await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH }))[0]!.id).toBe(
      recording.id,
    );
    const got = await query(h, scope, { kind: 'channelRecording.get', ...r });
    expect(got.id).toBe(recording.id);
    expect(ids(got.connectionRecordings)).toEqual(ids(recording.connectionRecordings));

    const mux = JSON.parse(await query(h, scope, { kind: 'channelRecording.muxJson', ...r })) as MuxJson;
    expect(mux).toMatchObject({ id: recording.id, durationSeconds: 4, layout: 'grid' });
    expect(
      mux.connectionRecordings
        .map((c) => [c.userId, c.offsetSeconds] as const)
        .sort((a, b) => a[0].localeCompare(b[0])),
    ).toEqual([
      ['alice', 0],
      ['bob', 0.5],
    ]);
    expect(mux.connectionRecordings.find((c) => c.userId === 'alice')!.updates).toHaveLength(3);
    for (const kind of ['channelRecording.url', 'channelRecording.audioUrl', 'channelRecording.videoUrl'] as const) {
      expect(await query(h, scope, { kind, ...r })).toMatch(new RegExp(`^${h.service.url}/files/`));
    }
    await expect(
      query(h, scope, {
        kind: 'channelRecording.videoUrl',
        applicationId: APP,
        channelId: CH2,
        channelRecordingId: audioOnly.id,
      }),
    ).rejects.toMatchObject({
      wire: { code: 'NotFound' },
    });

    // The 14 connection recording lists.
    const lists: Array<[RecordingQueryKind, Record<string, string>, string[]]> = [
      ['application.connectionRecordings.list', {}, allConnections],
      ['user.connectionRecordings.list', { userId: 'alice' }, [a.id]],
      ['device.connectionRecordings.list', { userId: 'alice', deviceId: alice.deviceId }, [a.id]],
      ['client.connectionRecordings.list', aliceRef, [a.id]],
      ['channel.connectionRecordings.list', { channelId: CH }, ids(recording.connectionRecordings)],
      ['channel.user.connectionRecordings.list', { channelId: CH, userId: 'alice' }, [a.id]],
      [
        'channel.device.connectionRecordings.list',
        { channelId: CH, userId: 'alice', deviceId: alice.deviceId },
        [a.id],
      ],
      ['channel.client.connectionRecordings.list', { channelId: CH, ...aliceRef }, [a.id]],
      ['connection.connectionRecordings.list', { channelId: CH, ...aliceRef, connectionId: 'alice-cam' }, [a.id]],
      [
        'channelRecording.connectionRecordings.list',
        { channelId: CH, channelRecordingId: recording.id },
        ids(recording.connectionRecordings),
      ],
      [
        'channelRecording.user.connectionRecordings.list',
        { channelId: CH, channelRecordingId: recording.id, userId: 'alice' },
        [a.id],
      ],
      [
        'channelRecording.device.connectionRecordings.list',
        { channelId: CH, channelRecordingId: recording.id, userId: 'alice', deviceId: alice.deviceId },
        [a.id],
      ],
      [
        'channelRecording.client.connectionRecordings.list',
        { channelId: CH, channelRecordingId: recording.id, ...aliceRef },
        [a.id],
      ],
      [
        'channelRecording.connection.connectionRecordings.list',
        { channelId: CH, channelRecordingId: recording.id, ...aliceRef, connectionId: 'alice-cam' },
        [a.id],
      ],
    ];
    for (const [kind, params, expected] of lists) {
      const list = (
        await natsRequest<ConnectionRecording[]>(h.nc, h.ns, 'recording-service.v1.query', {
          scope,
          query: { kind, applicationId: APP, ...params },
        })
      )
        .map((c) => c.id)
        .sort();
      expect([kind, list]).toEqual([kind, [...expected].sort()]);
    }
    const newestFirst = await query(h, scope, { kind: 'application.connectionRecordings.list', applicationId: APP });
    expect(newestFirst.map((c) => c.userId)).toEqual(['carol', 'bob', 'alice']);

    // One connection recording.
    const cr = {
      applicationId: APP,
      channelId: CH,
      ...aliceRef,
      connectionId: 'alice-cam',
      connectionRecordingId: a.id,
    };
    expect((await query(h, scope, { kind: 'connectionRecording.get', ...cr })).updates).toHaveLength(3);
    expect(JSON.parse(await query(h, scope, { kind: 'connectionRecording.muxJson', ...cr }))).toMatchObject({
      id: a.id,
      offsetSeconds: 0,
      audio: { file: a.audioFilePath },
    });
    expect(await query(h, scope, { kind: 'connectionRecording.audioUrl', ...cr })).toMatch(/\/files\//);
    expect(await query(h, scope, { kind: 'connectionRecording.videoUrl', ...cr })).toMatch(/\/files\//);
    await expect(
      query(h, scope, { kind: 'connectionRecording.get', ...cr, connectionId: 'someone-else' }),
    ).rejects.toMatchObject({ wire: { code: 'NotFound' } });
  });

  it('answers every interface B read over NATS, with OData options', async () => {
    const list = await query(h, scope, {
      kind: 'management.channelRecordings.list',
      applicationId: APP,
      options: { $count: 'true' },
    });
    expect(list['@odata.count']).toBe(2);
    expect(list.value.map((x) => x.id)).toEqual([audioOnly.id, recording.id]);
    expect(list.value[0]).not.toHaveProperty('connectionRecordings');
    const filtered = await query(h, scope, {
      kind: 'management.channelRecordings.list',
      applicationId: APP,
      options: {
        $filter: `channelId eq '${CH}' and hasVideo and startTimestamp ge ${new Date(t0 - 1000).toISOString()}`,
        $select: 'id,channelId,fileSize',
      },
    });
    expect(filtered.value).toEqual([{ id: recording.id, channelId: CH, fileSize: recording.fileSize }]);
    const paged = await query(h, scope, {
      kind: 'management.channelRecordings.list',
      applicationId: APP,
      options: { $orderby: 'startTimestamp asc', $top: '1', $skip: '1' },
    });
    expect(paged.value.map((x) => x.id)).toEqual([audioOnly.id]);
    await expect(
      query(h, scope, {
        kind: 'management.channelRecordings.list',
        applicationId: APP,
        options: { $filter: 'nope eq 1' },
      }),
    ).rejects.toMatchObject({
      wire: { code: 'ValidationFailed', details: [expect.objectContaining({ field: '$filter' })] },
    });
    const one = await query(h, scope, {
      kind: 'management.channelRecording.get',
      applicationId: APP,
      channelId: CH,
      channelRecordingId: recording.id,
    });
    expect(one).toMatchObject({ id: recording.id, ready: true });
    expect(one).not.toHaveProperty('connectionRecordings');

    const connections = await query(h, scope, {
      kind: 'management.connectionRecordings.list',
      applicationId: APP,
      options: { $filter: "userId in ('alice','bob')", $count: 'true' },
    });
    expect(connections['@odata.count']).toBe(2);
    expect(connections.value.every((c) => (c.updates ?? []).length === 3)).toBe(true);
    const a = recording.connectionRecordings.find((c) => c.userId === 'alice')!;
    expect(
      await query(h, scope, {
        kind: 'management.connectionRecording.get',
        applicationId: APP,
        connectionRecordingId: a.id,
      }),
    ).toMatchObject({ id: a.id, userId: 'alice' });
    expect(
      await query(h, scope, {
        kind: 'management.connectionRecording.url',
        applicationId: APP,
        connectionRecordingId: a.id,
      }),
    ).toMatch(/\/files\//);
    expect(
      await query(h, scope, {
        kind: 'management.connectionRecording.audioUrl',
        applicationId: APP,
        connectionRecordingId: a.id,
      }),
    ).toMatch(/\/files\//);
    expect(
      await query(h, scope, {
        kind: 'management.connectionRecording.videoUrl',
        applicationId: APP,
        connectionRecordingId: a.id,
      }),
    ).toMatch(/\/files\//);

    // The per-operation subjects management-api speaks answer the same.
    const viaManagement = await natsRequest<{ value: Array<{ id: string }> }>(
      h.nc,
      h.ns,
      'recording-service.v1.channel-recordings.list',
      { scope, applicationId: APP, query: { $top: '1' } },
    );
    expect(viaManagement.value.map((x) => x.id)).toEqual([audioOnly.id]);
    // Single reads bind $select and $expand to the record's properties: the names of the list's model.
    const channelRef = { scope, applicationId: APP, channelId: CH, channelRecordingId: recording.id };
    const connectionRef = { scope, applicationId: APP, connectionRecordingId: a.id };
    expect(
      await natsRequest(h.nc, h.ns, 'recording-service.v1.channel-recordings.get', {
        ...channelRef,
        query: { $select: 'id,ready' },
      }),
    ).toEqual({ id: recording.id, ready: true });
    expect(
      await natsRequest(h.nc, h.ns, 'recording-service.v1.connection-recordings.get', {
        ...connectionRef,
        query: { $select: 'userId' },
      }),
    ).toEqual({ userId: 'alice' });
    // `updates` is a field of the record: $select keeps it (before: UnknownProperty); it is not filterable.
    const withUpdates = await query(h, scope, {
      kind: 'management.connectionRecording.get',
      applicationId: APP,
      connectionRecordingId: a.id,
      options: { $select: 'id,updates' },
    });
    expect(withUpdates).toEqual({ id: a.id, updates: a.updates });
    const listed = await query(h, scope, {
      kind: 'management.connectionRecordings.list',
      applicationId: APP,
      options: { $filter: "userId eq 'alice'", $select: 'updates' },
    });
    expect(listed.value).toEqual([{ updates: a.updates }]);
    await expect(
      query(h, scope, {
        kind: 'management.connectionRecordings.list',
        applicationId: APP,
        options: { $filter: 'updates eq null' },
      }),
    ).rejects.toMatchObject({
      wire: { code: 'ValidationFailed', details: [expect.objectContaining({ field: '$filter' })] },
    });
    for (const [subject, ref] of [
      ['recording-service.v1.channel-recordings.get', channelRef],
      ['recording-service.v1.connection-recordings.get', connectionRef],
    ] as const) {
      for (const [option, value] of [
        ['$select', 'id,colour'],
        ['$expand', 'connectionRecordings'],
      ] as const) {
        await expect(natsRequest(h.nc, h.ns, subject, { ...ref, query: { [option]: value } })).rejects.toMatchObject({
          wire: {
            code: 'ValidationFailed',
            details: [{ field: option, message: expect.stringMatching(/^UnknownProperty: /) }],
          },
        });
      }
    }
    await expect(
      natsRequest(h.nc, h.ns, 'recording-service.v1.channel-recordings.list', {
        scope,
        applicationId: APP,
        query: { $expand: 'colour' },
      }),
    ).rejects.toMatchObject({
      wire: {
        code: 'ValidationFailed',
        details: [{ field: '$expand', message: expect.stringMatching(/^UnknownProperty: /) }],
      },
    });
    expect(
      await natsRequest(h.nc, h.ns, 'recording-service.v1.channel-recordings.read', {
        scope,
        applicationId: APP,
        channelId: CH,
        channelRecordingId: recording.id,
        what: 'MuxJson',
      }),
    ).toContain(recording.id);

    // Used storage: every byte of every file of the organization, and per application.
    const files = [
      recording.fileSize,
      recording.audioFileSize,
      recording.videoFileSize,
      audioOnly.fileSize,
      audioOnly.audioFileSize,
    ]
      .concat(
        [...recording.connectionRecordings, ...audioOnly.connectionRecordings].flatMap((c) => [
          c.audioFileSize,
          c.videoFileSize,
        ]),
      )
      .reduce<number>((sum, n) => sum + (n ?? 0), 0);
    expect(await query(h, scope, { kind: 'storage.usedSize' })).toBe(files);
    expect(await query(h, scope, { kind: 'storage.usedSize.application', applicationId: APP })).toBe(files);
    expect(await query(h, scope, { kind: 'storage.usedSize.application', applicationId: 'another-app' })).toBe(0);
    expect(
      await natsRequest(h.nc, h.ns, 'recording-service.v1.storage.used-size', { scope, applicationIds: [APP] }),
    ).toBe(files);
  });

  it('keeps organizations apart: another organization sees nothing', async () => {
    expect(await query(h, stranger, { kind: 'channelRecordings.list', applicationId: APP })).toEqual([]);
    expect(await query(h, stranger, { kind: 'channelRecordings.count', applicationId: APP })).toBe(0);
    expect(await query(h, stranger, { kind: 'application.connectionRecordings.list', applicationId: APP })).toEqual([]);
    expect(await query(h, stranger, { kind: 'storage.usedSize' })).toBe(0);
    expect((await query(h, stranger, { kind: 'management.channelRecordings.list', applicationId: APP })).value).toEqual(
      [],
    );
    const r = { applicationId: APP, channelId: CH, channelRecordingId: recording.id };
    for (const kind of ['channelRecording.get', 'channelRecording.url', 'channelRecording.muxJson'] as const) {
      await expect(query(h, stranger, { kind, ...r })).rejects.toMatchObject({ wire: { code: 'NotFound' } });
    }
    await expect(command(h, stranger, { kind: 'channelRecording.delete', ...r })).rejects.toMatchObject({
      wire: { code: 'NotFound' },
    });
    await expect(
      query(h, stranger, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH, take: 1001 } as never),
    ).rejects.toMatchObject({
      wire: { code: 'ValidationFailed' },
    });
    await expect(query(h, OPERATOR, { kind: 'channelRecording.get', ...r })).resolves.toMatchObject({
      id: recording.id,
    });
  });

  it('a signed URL downloads the file over HTTP, whole or by range; a tampered one does not', async () => {
    const url = await query(h, scope, {
      kind: 'channelRecording.url',
      applicationId: APP,
      channelId: CH,
      channelRecordingId: recording.id,
    });
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/webm');
    expect(Number(whole.headers.get('content-length'))).toBe(recording.fileSize);
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.equals(fs.readFileSync(recording.filePath!))).toBe(true);

    const part = await fetch(url, { headers: { Range: 'bytes=10-29' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-29/${recording.fileSize}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 30))).toBe(true);
    expect((await fetch(url, { headers: { Range: `bytes=${recording.fileSize! + 10}-` } })).status).toBe(416);

    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(recording.fileSize);

    const tampered = url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(tampered)).status).toBe(404);
  });

  it('announced the ready events on the event stream', async () => {
    const types = (id: string) =>
      watched.events
        .filter(
          (e) => e.event.channel?.channelRecording?.id === id || e.event.connection?.connectionRecording?.id === id,
        )
        .map((e) => e.event.type);
    expect(types(recording.id).sort()).toEqual([
      'channel.recording.audio.ready',
      'channel.recording.ready',
      'channel.recording.video.ready',
    ]);
    const ready = watched.events.find(
      (e) => e.event.type === 'channel.recording.ready' && e.event.channel?.channelRecording?.id === recording.id,
    )!;
    expect(ready).toMatchObject({
      organizationId: ORG,
      applicationId: APP,
      event: { origin: 'server', channel: { id: CH, channelRecording: { ready: true, fileName: recording.fileName } } },
    });
    const a = recording.connectionRecordings.find((c) => c.userId === 'alice')!;
    expect(types(a.id).sort()).toEqual([
      'connection.recording.audio.ready',
      'connection.recording.video.ready',
      'connection.recordings.ready',
    ]);
    // One moment (the stage change to ready): the channel's and its connections' ready events carry
    // its time, so a batch webhook gets them in one call.
    const ids = new Set([recording.id, ...recording.connectionRecordings.map((c) => c.id)]);
    const moment = watched.events.filter(
      (e) =>
        ids.has(e.event.channel?.channelRecording?.id ?? '') ||
        ids.has(e.event.connection?.connectionRecording?.id ?? ''),
    );
    expect(moment).toHaveLength(
      3 + recording.connectionRecordings.reduce((n, c) => n + Number(c.audioReady) + Number(c.videoReady) + 1, 0),
    );
    const db = new pg.Client({ connectionString: h.db.url });
    await db.connect();
    try {
      const [row] = (
        await db.query<{ stage: string; stage_changed_on: string }>(
          'SELECT stage, stage_changed_on FROM recording.channel_recording WHERE id = $1',
          [recording.id],
        )
      ).rows;
      expect(row!.stage).toBe('ready');
      expect(moment.map((e) => e.event.timestamp)).toEqual(moment.map(() => Number(row!.stage_changed_on)));
    } finally {
      await db.end();
    }
  });

  it('an expiry patch lets the sweeper delete the recording and its files; delete removes another one', async () => {
    const r = { applicationId: APP, channelId: CH, channelRecordingId: recording.id };
    await expect(
      command(h, scope, { kind: 'channelRecording.update', ...r, patch: { expiryTimestamp: 'not a date' } } as never),
    ).rejects.toMatchObject({ wire: { code: 'ValidationFailed' } });
    // A leap second is no JavaScript date: the date-time format refuses it (before, it reached PostgreSQL as NaN:
    // Internal).
    await expect(
      command(h, scope, { kind: 'channelRecording.update', ...r, patch: { expiryTimestamp: '2030-06-30T23:59:60Z' } }),
    ).rejects.toMatchObject({
      wire: {
        code: 'ValidationFailed',
        details: [{ field: 'command.patch.expiryTimestamp', message: expect.any(String) }],
      },
    });
    expect((await query(h, scope, { kind: 'channelRecording.get', ...r })).expiryTimestamp).toBeNull();
    await command(h, scope, {
      kind: 'channelRecording.update',
      ...r,
      patch: { expiryTimestamp: new Date(Date.now() + 600_000).toISOString() },
    });
    expect((await query(h, scope, { kind: 'channelRecording.get', ...r })).expiryTimestamp).not.toBeNull();
    const url = await query(h, scope, { kind: 'channelRecording.url', ...r });
    await command(h, scope, {
      kind: 'channelRecording.update',
      ...r,
      patch: { expiryTimestamp: new Date(Date.now() - 1000).toISOString() },
    });

    const deleted = await waitFor(
      async () => {
        const got = await query(h, scope, { kind: 'channelRecording.get', ...r });
        return got.deleted ? got : null;
      },
      { timeoutMs: 15000, description: 'the sweeper to delete the expired recording' },
    );
    expect(deleted).toMatchObject({ deleted: true, ready: false, url: null, filePath: null });
    expect(deleted.deletedOn).not.toBeNull();
    expect(deleted.connectionRecordings.every((c) => c.deleted && c.audioFilePath === null)).toBe(true);
    // Files are removed after the deletion commits (a crash in between leaves files, never a record pointing at
    // nothing).
    const files = [
      recording.filePath!,
      recording.audioFilePath!,
      ...recording.connectionRecordings.map((c) => c.videoFilePath!),
    ];
    await waitFor(() => files.every((file) => !fs.existsSync(file)), {
      timeoutMs: 15000,
      description: 'the files of the expired recording to be removed',
    });
    expect((await fetch(url)).status).toBe(404);
    await waitFor(
      () =>
        watched.events.some(
          (e) => e.event.type === 'channel.recording.expired' && e.event.channel?.channelRecording?.id === recording.id,
        ),
      {
        description: 'channel.recording.expired',
      },
    );

    // Explicit delete (deleteFiles is true): the other recording and its files go too.
    const side = { applicationId: APP, channelId: CH2, channelRecordingId: audioOnly.id };
    await command(h, scope, { kind: 'channelRecording.delete', ...side });
    const gone = await query(h, scope, { kind: 'channelRecording.get', ...side });
    expect(gone).toMatchObject({ deleted: true, ready: false });
    expect(gone.deletedBy).toBe(scope.principal);
    expect(fs.existsSync(audioOnly.filePath!)).toBe(false);
    await command(h, scope, { kind: 'channelRecording.delete', ...side }); // again: a no-op
    expect(await query(h, scope, { kind: 'storage.usedSize' })).toBe(0);
  });

  it('rejects malformed requests with the offending field', async () => {
    await expect(
      natsRequest(h.nc, h.ns, 'recording-service.v1.query', { scope, query: { kind: 'no.such.kind' } }),
    ).rejects.toMatchObject({
      wire: { code: 'ValidationFailed', details: [expect.objectContaining({ field: 'query.kind' })] },
    });
    await expect(
      natsRequest(h.nc, h.ns, 'recording-service.v1.query', {
        scope,
        query: { kind: 'channelRecordings.list', applicationId: APP, skip: -1 },
      }),
    ).rejects.toBeInstanceOf(RequestFailed);
    await expect(
      natsRequest(h.nc, h.ns, 'recording-service.v1.query', {
        scope,
        query: { kind: 'channelRecording.get', applicationId: APP, channelId: CH, channelRecordingId: 'not-a-uuid' },
      }),
    ).rejects.toMatchObject({ wire: { code: 'ValidationFailed' } });
  });

  it('exposes its own metrics and shuts down gracefully on SIGTERM', async () => {
    const metrics = await (await fetch(`${h.service.url}/metrics`)).text();
    expect(metrics).toMatch(/recording_domain_events_total\{outcome="applied"[^}]*\} 13/);
    expect(metrics).toMatch(/recording_pipeline_steps_total\{step="mux",outcome="done"[^}]*\} 2/);
    const exit = await h.service.stop('SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
