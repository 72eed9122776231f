/**
 * The channel config governs recordings of its channels: management-api answers the recording
 * part of the governing config (`management-api.v1.channel-configs.recording`), and
 * recording-service opens a channel recording of a channel whose config has
 * `recordingManagementOverride.muxDisabled` without muxing it (its connection files are still
 * moved and served). Real management-api and recording-service on one namespace.
 */
import assert from 'node:assert/strict';
import {
  ChannelRecordingSettingsSubject,
  type ChannelRecording,
  type ChannelRecordingSettings,
  type ConnectionRecording,
  type DomainEvent,
} from '@switchboard/contracts';
import pg from 'pg';
import { waitFor } from '@switchboard/testing';
import { ffmpegAvailable } from '../../tools/media/media.mjs';
import { startManagement, type Harness as ManagementHarness } from '../management/support.js';
import {
  connectionEvent,
  natsRequest,
  OPERATOR,
  publish,
  query,
  RequestFailed,
  simConnection,
  startHarness,
  watchEvents,
  writeMediaFor,
  type Harness,
} from './harness.js';

describe('channel config overrides of recordings', () => {
  let m: ManagementHarness;
  let h: Harness;
  let app: string;
  let noMuxConfigId: string;
  let anyConfigId: string;
  let watched: { events: DomainEvent[] };

  beforeAll(async () => {
    if (!(await ffmpegAvailable()))
      throw new Error('ffmpeg and ffprobe are required by the recording tests (apt-get install ffmpeg)');
    m = await startManagement('recmux');
    h = await startHarness('recmux', {}, m.ns);
    watched = watchEvents(h);
    await h.start();
    app = `${m.ns}-app`.replace(/_/g, '-');
    const appConfigId = (await m.api('POST', '/ApplicationConfigs', { body: { applicationId: app } })).body
      .id as string;
    const noMux = await m.api('POST', '/ChannelConfigs', {
      body: {
        applicationConfigId: appConfigId,
        channelIdPattern: 'no-mux',
        priority: 1,
        recordingManagementOverride: { muxDisabled: true },
      },
    });
    const any = await m.api('POST', '/ChannelConfigs', {
      body: {
        applicationConfigId: appConfigId,
        channelIdPattern: '*',
        recordingEnabled: true,
        recordingManagementOverride: { muxDisabled: false },
      },
    });
    assert.deepEqual([noMux.status, any.status], [201, 201]);
    noMuxConfigId = noMux.body.id;
    anyConfigId = any.body.id;
  }, 90_000);

  afterAll(async () => {
    await h?.close();
    await m?.stop();
  });

  const settings = (applicationId: string, channelId: string) =>
    natsRequest<ChannelRecordingSettings>(h.nc, h.ns, ChannelRecordingSettingsSubject, { applicationId, channelId });

  it('management-api answers the recording fields of the governing channel config', async () => {
    expect(await settings(app, 'no-mux')).toEqual({
      channelConfigId: noMuxConfigId,
      recordingEnabled: null,
      muxDisabled: true,
    });
    expect(await settings(app, 'plain')).toEqual({
      channelConfigId: anyConfigId,
      recordingEnabled: true,
      muxDisabled: false,
    });
    await expect(settings('no-such-app', 'plain')).rejects.toMatchObject({ wire: { code: 'NotFound' } });
    await expect(settings(app, '')).rejects.toBeInstanceOf(RequestFailed);
  });

  it('a channel whose config disables muxing gets recordings that are not muxed; other channels are muxed', async () => {
    const t0 = Date.now() - 60_000;
    const noMux = simConnection({
      organizationId: m.orgA,
      applicationId: app,
      channelId: 'no-mux',
      userId: 'nina',
      connectionId: 'nina-cam',
      recording: true,
    });
    const plain = simConnection({
      organizationId: m.orgA,
      applicationId: app,
      channelId: 'plain',
      userId: 'paul',
      connectionId: 'paul-cam',
      recording: true,
    });
    await publish(h, [
      connectionEvent('connection.connected', noMux, t0),
      connectionEvent('connection.connected', plain, t0 + 100),
    ]);
    noMux.state = 'closed';
    plain.state = 'closed';
    await publish(h, [
      connectionEvent('connection.closed', noMux, t0 + 3000),
      connectionEvent('connection.closed', plain, t0 + 3100),
    ]);
    for (const c of [noMux, plain]) {
      await waitFor(
        async () =>
          (
            await query(h, OPERATOR, {
              kind: 'channel.connectionRecordings.list',
              applicationId: app,
              channelId: c.channelId,
            })
          )[0]?.stopTimestamp,
        {
          timeoutMs: 20000,
          description: `the recording of ${c.channelId} to stop`,
        },
      );
      await writeMediaFor(h, c);
    }
    const done = async (
      channelId: string,
    ): Promise<{ channel: ChannelRecording; connections: ConnectionRecording[] }> =>
      waitFor(
        async () => {
          const [channel] = await query(h, OPERATOR, {
            kind: 'channel.recordings.list',
            applicationId: app,
            channelId,
          });
          const connections = await query(h, OPERATOR, {
            kind: 'channel.connectionRecordings.list',
            applicationId: app,
            channelId,
          });
          return channel &&
            !channel.muxPending &&
            !channel.movePending &&
            connections.every((c) => c.audioReady && c.videoReady)
            ? { channel, connections }
            : null;
        },
        { timeoutMs: 60000, intervalMs: 250, description: `the ${channelId} recording to be moved` },
      );

    const unmuxed = await done('no-mux');
    expect(unmuxed.channel).toMatchObject({ muxEnabled: false, muxPending: false, ready: false, fileSize: null });
    expect(unmuxed.connections).toHaveLength(1);
    expect(
      await query(h, OPERATOR, {
        kind: 'channelRecording.url',
        applicationId: app,
        channelId: 'no-mux',
        channelRecordingId: unmuxed.channel.id,
      }).catch((e: RequestFailed) => e.wire.code),
    ).toBe('NotFound');
    // Its processing is finished, not failed: no error, and nothing left for the pipeline to retry.
    const db = new pg.Client({ connectionString: h.db.url });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT stage, error FROM recording.channel_recording WHERE id = $1', [
        unmuxed.channel.id,
      ]);
      expect(rows).toEqual([{ stage: 'ready', error: null }]);
    } finally {
      await db.end();
    }

    const muxed = await done('plain');
    expect(muxed.channel).toMatchObject({
      muxEnabled: true,
      muxPending: false,
      ready: true,
      audioReady: true,
      videoReady: true,
    });

    // Only the muxed one announces a channel file; both announce their connection files.
    await waitFor(() => watched.events.filter((e) => e.event.type === 'connection.recordings.ready').length === 2, {
      timeoutMs: 15000,
      description: 'both connection.recordings.ready events',
    });
    expect(
      watched.events.filter((e) => e.event.type === 'channel.recording.ready').map((e) => e.event.channel!.id),
    ).toEqual(['plain']);
  }, 150_000);
});
