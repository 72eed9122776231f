/**
 * Recordings of real media (issue 24): a werift publisher sends a real Opus tone and VP8 through
 * Janus; `connection.record` (sent here as the registry will send it) makes the media-agent record
 * it, convert the `.mjr` files with janus-pp-rec on stop and upload them to the JetStream Object
 * Store bucket that a spawned recording-service's ingest takes them from (no shared directory).
 * The domain events the registry would publish are published by the test (tests/recordings/harness).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ChannelRecording, ConnectionRecording } from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import { decodeFile, probeFile } from '../../tools/media/media.mjs';
import { startMediaStack, type MediaStack } from '../../tools/testing/media-stack.js';
import { opusToneFrames } from '../../tools/testing/media-opus.js';
import { connected, TestMixerParticipant, TestPublisher } from '../../tools/testing/webrtc-client.js';
import {
  connectionEvent,
  OPERATOR,
  publish,
  query,
  simConnection,
  startHarness,
  type Harness,
  type SimConnection,
} from '../recordings/harness.js';

const run = promisify(execFile);
const ORG = `org-${randomUUID()}`;
const APP = 'rec-media';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('recordings of real media through Janus and the media-agent', () => {
  let h: Harness;
  let stack: MediaStack;
  let recordingsDir: string;
  const downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'rec-downloads-'));
  const clients: TestPublisher[] = [];
  const mixerClients: TestMixerParticipant[] = [];
  const tone = opusToneFrames(2, 440);

  beforeAll(async () => {
    h = await startHarness('media-rec', { RECORDINGS_INGEST_TIMEOUT_MS: '60000' });
    await h.start();
    // Janus runs as nobody: the agent's directory must be reachable for it.
    recordingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-rec-'));
    fs.chmodSync(recordingsDir, 0o755);
    stack = await startMediaStack(
      { MEDIA_RECORDINGS_DIR: path.join(recordingsDir, 'recordings'), LOG_LEVEL: 'info' },
      { namespace: h.ns },
    );
  }, 60000);

  afterAll(async () => {
    await Promise.all([...clients, ...mixerClients].map((c) => c.close().catch(() => undefined)));
    if (process.env.SB_TEST_VERBOSE === '1') process.stdout.write(stack?.agent.output() ?? '');
    await stack?.stop();
    await h?.close();
    fs.rmSync(recordingsDir, { recursive: true, force: true });
    fs.rmSync(downloads, { recursive: true, force: true });
  });

  function connection(channelId: string, connectionId: string): SimConnection {
    return simConnection({ organizationId: ORG, applicationId: APP, channelId, userId: connectionId, connectionId });
  }

  /** The runtime's domain event of the connection now (what the registry publishes). */
  async function event(
    c: SimConnection,
    type: 'connection.connected' | 'connection.updated' | 'connection.closed',
    at = Date.now(),
  ) {
    await publish(h, [connectionEvent(type, c, at)]);
  }

  async function publisherIn(c: SimConnection): Promise<void> {
    const ref = { applicationId: c.applicationId, channelId: c.channelId };
    await stack.command({ kind: 'room.create', ...ref });
    const publisher = new TestPublisher();
    clients.push(publisher);
    const { answer } = await stack.command({
      kind: 'publisher.join',
      ...ref,
      connectionId: c.connectionId,
      offer: await publisher.offer(),
    });
    await publisher.accept(answer);
    await connected(publisher.pc);
    publisher.start({ audioFrames: tone });
  }

  const record = (c: SimConnection, recording: boolean) =>
    stack.command({
      kind: 'connection.record',
      applicationId: c.applicationId,
      channelId: c.channelId,
      connectionId: c.connectionId,
      recording,
    });

  async function readyRecordings(channelId: string, count: number): Promise<ChannelRecording[]> {
    return waitFor(
      async () => {
        const list = await query(h, OPERATOR, { kind: 'channel.recordings.list', applicationId: APP, channelId });
        return list.length === count && list.every((r) => r.ready) ? list : null;
      },
      { timeoutMs: 60000, intervalMs: 250, description: `${count} ready recording(s) of ${channelId}` },
    );
  }

  async function connectionRecordingsOf(r: ChannelRecording): Promise<ConnectionRecording[]> {
    return query(h, OPERATOR, {
      kind: 'channelRecording.connectionRecordings.list',
      applicationId: APP,
      channelId: r.channelId,
      channelRecordingId: r.id,
    });
  }

  /** Downloads a signed URL into a file of the test; checks the size the recording states. */
  async function download(url: string | null, size: number | null, name: string): Promise<string> {
    expect(url).toBeTruthy();
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(size);
    const file = path.join(downloads, name);
    fs.writeFileSync(file, bytes);
    return file;
  }

  /** Mean volume in dB (ffmpeg volumedetect): a tone is far above silence (-91 dB). */
  async function meanVolume(file: string): Promise<number> {
    const { stderr } = await run('ffmpeg', [
      '-hide_banner',
      '-nostdin',
      '-i',
      file,
      '-af',
      'volumedetect',
      '-f',
      'null',
      '-',
    ]);
    return Number(/mean_volume: (-?[\d.]+) dB/.exec(stderr)?.[1] ?? -Infinity);
  }

  /** CPU seconds Janus used so far (utime + stime of /proc/<pid>/stat). */
  function janusCpuSeconds(): number {
    const fields = fs.readFileSync(`/proc/${stack.janus.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  }

  it('records 10 s of a publisher: the files last 10 s, hold the tone and download', async () => {
    const alice = connection('record-10s', 'alice-cam');
    await publisherIn(alice);
    // Janus CPU without recording, then while recording (the closing note's figure).
    let cpu = janusCpuSeconds();
    await sleep(5000);
    const withoutRecording = (janusCpuSeconds() - cpu) / 5;

    alice.recording = true;
    // The recording starts 2 s before the media does (the registry's event came earlier).
    await event(alice, 'connection.connected', Date.now() - 2000);
    cpu = janusCpuSeconds();
    const recordSentAt = Date.now();
    expect(await record(alice, true)).toEqual({ recording: true });
    expect(await record(alice, true)).toEqual({ recording: true }); // idempotent
    await sleep(10000);
    const withRecording = (janusCpuSeconds() - cpu) / 10;
    expect(await record(alice, false)).toEqual({ recording: false });
    alice.recording = false;
    await event(alice, 'connection.updated');

    const [recording] = await readyRecordings('record-10s', 1);
    const [cr] = await connectionRecordingsOf(recording!);
    expect(cr).toMatchObject({ connectionId: 'alice-cam', ingested: true, audioReady: true, videoReady: true });
    expect(cr!.audioFileName).toBe(`${cr!.id}.audio.ogg`);
    expect(cr!.videoFileName).toBe(`${cr!.id}.video.webm`);
    const audio = await download(cr!.audioUrl, cr!.audioFileSize, 'alice.ogg');
    const video = await download(cr!.videoUrl, cr!.videoFileSize, 'alice.webm');
    const audioProbe = await probeFile(audio);
    const videoProbe = await probeFile(video);
    expect(audioProbe.streams).toEqual([expect.objectContaining({ type: 'audio', codec: 'opus' })]);
    expect(videoProbe.streams).toEqual([expect.objectContaining({ type: 'video', codec: 'vp8' })]);
    expect(Math.abs(audioProbe.durationSeconds - 10)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(videoProbe.durationSeconds - 10)).toBeLessThanOrEqual(0.5);
    await decodeFile(audio);
    expect(await meanVolume(audio)).toBeGreaterThan(-40);
    // First and last frames come from the files: the media's first packet (not the recording's start), 10 s apart.
    expect(Math.abs(Date.parse(cr!.audioFirstFrameTimestamp!) - recordSentAt)).toBeLessThanOrEqual(500);
    expect(Math.abs(Date.parse(cr!.videoFirstFrameTimestamp!) - recordSentAt)).toBeLessThanOrEqual(500);
    expect(Date.parse(cr!.audioFirstFrameTimestamp!) - Date.parse(cr!.startTimestamp)).toBeGreaterThan(1500);
    const audioSpan = Date.parse(cr!.audioLastFrameTimestamp!) - Date.parse(cr!.audioFirstFrameTimestamp!);
    expect(Math.abs(audioSpan - 10000)).toBeLessThanOrEqual(500);

    const handovers = stack.agent
      .output()
      .split('\n')
      .filter((line) => line.includes('recording handed over'))
      .map((line) => JSON.parse(line) as { convertMs: number; mediaMs: number });
    const conversions = handovers.map((x) => `${x.convertMs} ms for ${(x.mediaMs / 1000).toFixed(1)} s`);
    process.stdout.write(
      `recording figures: Janus CPU ${(withoutRecording * 100).toFixed(1)} % without recording, ` +
        `${(withRecording * 100).toFixed(1)} % while recording one publisher; ` +
        `conversion (both files, process starts included) ${conversions.join(', ')} of media\n`,
    );
  }, 90000);

  it('a start after a stop in the same connection records a new connection recording', async () => {
    const bob = connection('record-twice', 'bob-cam');
    await publisherIn(bob);
    for (let round = 0; round < 2; round++) {
      bob.recording = true;
      await event(bob, round === 0 ? 'connection.connected' : 'connection.updated');
      await record(bob, true);
      await sleep(3000);
      await record(bob, false);
      bob.recording = false;
      await event(bob, 'connection.updated');
    }
    // The last one to stop closes a channel recording: one per round.
    const recordings = await readyRecordings('record-twice', 2);
    const crs = (await Promise.all(recordings.map((r) => connectionRecordingsOf(r)))).flat();
    expect(crs).toHaveLength(2);
    for (const cr of crs) {
      const audio = await download(cr.audioUrl, cr.audioFileSize, `${cr.id}.ogg`);
      expect(Math.abs((await probeFile(audio)).durationSeconds - 3)).toBeLessThanOrEqual(0.5);
    }
  }, 90000);

  it('records an mcu participant (AudioBridge): what it sent, before the mix', async () => {
    const frank = { ...connection('record-mcu', 'frank-mcu'), hasVideo: false };
    const ref = { applicationId: APP, channelId: 'record-mcu' };
    await stack.command({ kind: 'mixer.create', ...ref });
    const participant = new TestMixerParticipant();
    mixerClients.push(participant);
    const { answer } = await stack.command({
      kind: 'mixer.join',
      ...ref,
      connectionId: 'frank-mcu',
      offer: await participant.offer(),
    });
    await participant.accept(answer);
    await connected(participant.pc);
    participant.start(tone);
    frank.recording = true;
    await event(frank, 'connection.connected');
    expect(await record(frank, true)).toEqual({ recording: true });
    await sleep(4000);
    await record(frank, false);
    frank.recording = false;
    await event(frank, 'connection.updated');

    const [recording] = await readyRecordings('record-mcu', 1);
    const [cr] = await connectionRecordingsOf(recording!);
    expect(cr).toMatchObject({ ingested: true, audioReady: true, hasVideo: false });
    const audio = await download(cr!.audioUrl, cr!.audioFileSize, 'frank.ogg');
    await decodeFile(audio);
    expect(Math.abs((await probeFile(audio)).durationSeconds - 4)).toBeLessThanOrEqual(0.5);
    expect(await meanVolume(audio)).toBeGreaterThan(-40);
  }, 90000);

  it('the agent killed during a recording: after its restart the recording ends playable', async () => {
    const carol = connection('record-crash', 'carol-cam');
    await publisherIn(carol);
    carol.recording = true;
    await event(carol, 'connection.connected');
    const recordedAt = Date.now();
    await record(carol, true);
    await sleep(4000);
    stack.events.length = 0;
    const killedAt = Date.now();
    await stack.restartAgent();
    // The successor destroys the room its predecessor left: the publisher's media, and Janus's recording, end.
    await waitFor(() => stack.events.some((e) => e.kind === 'room.ended' && e.reason === 'cleaned-up'), {
      description: 'the leftover room cleaned up',
    });
    const endedAt = Date.now();
    expect(stack.agent.output()).toContain('recordings of an earlier run found');
    carol.state = 'closed';
    await event(carol, 'connection.closed');

    const [recording] = await readyRecordings('record-crash', 1);
    const [cr] = await connectionRecordingsOf(recording!);
    expect(cr).toMatchObject({ ingested: true, audioReady: true, videoReady: true });
    expect(JSON.parse(cr!.metadata!)).toEqual({ interrupted: true, interruptedReason: 'media-agent restarted' });
    const audio = await download(cr!.audioUrl, cr!.audioFileSize, 'carol.ogg');
    const video = await download(cr!.videoUrl, cr!.videoFileSize, 'carol.webm');
    await decodeFile(audio);
    expect(await meanVolume(audio)).toBeGreaterThan(-40);
    const seconds = (await probeFile(audio)).durationSeconds;
    expect(seconds).toBeGreaterThan((killedAt - recordedAt) / 1000 - 0.5);
    expect(seconds).toBeLessThan((endedAt - recordedAt) / 1000 + 0.5);
    expect((await probeFile(video)).durationSeconds).toBeGreaterThan((killedAt - recordedAt) / 1000 - 0.5);
    // Nothing left behind in the agent's directory.
    await waitFor(() => fs.readdirSync(path.join(recordingsDir, 'recordings')).length === 0, {
      description: "the agent's recordings directory emptied",
    });
  }, 90000);

  it('an agent stopped (SIGTERM) during a recording hands it over before it exits', async () => {
    const erin = connection('record-sigterm', 'erin-cam');
    await publisherIn(erin);
    erin.recording = true;
    await event(erin, 'connection.connected');
    const recordedAt = Date.now();
    await record(erin, true);
    await sleep(3000);
    const stoppedAt = Date.now();
    await stack.restartAgent('SIGTERM');
    erin.state = 'closed';
    await event(erin, 'connection.closed');

    const [recording] = await readyRecordings('record-sigterm', 1);
    const [cr] = await connectionRecordingsOf(recording!);
    expect(cr).toMatchObject({ ingested: true, audioReady: true, videoReady: true });
    expect(cr!.metadata).toBeNull(); // stopped by the stopping agent: not cut off
    const audio = await download(cr!.audioUrl, cr!.audioFileSize, 'erin.ogg');
    await decodeFile(audio);
    const seconds = (await probeFile(audio)).durationSeconds;
    expect(Math.abs(seconds - (stoppedAt - recordedAt) / 1000)).toBeLessThanOrEqual(0.5);
    // The stopping agent handed it over itself: its successor found nothing left.
    expect(stack.agent.output()).not.toContain('recordings of an earlier run found');
  }, 90000);

  it('Janus killed during a recording: the agent hands over what Janus wrote', async () => {
    const dave = connection('record-janus-crash', 'dave-cam');
    await publisherIn(dave);
    dave.recording = true;
    await event(dave, 'connection.connected');
    const recordedAt = Date.now();
    await record(dave, true);
    await sleep(4000);
    const killedAt = Date.now();
    await stack.janus.kill('SIGKILL');
    dave.state = 'closed';
    await event(dave, 'connection.closed');

    const [recording] = await readyRecordings('record-janus-crash', 1);
    const [cr] = await connectionRecordingsOf(recording!);
    expect(cr).toMatchObject({ ingested: true, audioReady: true, videoReady: true });
    expect(JSON.parse(cr!.metadata!)).toEqual({ interrupted: true, interruptedReason: 'media server lost' });
    const audio = await download(cr!.audioUrl, cr!.audioFileSize, 'dave.ogg');
    await decodeFile(audio);
    // Janus buffers its writes: what it had not flushed when killed is lost.
    const seconds = (await probeFile(audio)).durationSeconds;
    expect(seconds).toBeGreaterThan((killedAt - recordedAt) / 1000 - 1);
    expect(seconds).toBeLessThan((killedAt - recordedAt) / 1000 + 0.5);
    await stack.janus.restart();
  }, 90000);

  it('refuses to record a connection that is not a publisher here', async () => {
    await expect(record(connection('record-10s', 'nobody-here'), true)).rejects.toMatchObject({ code: 'NotFound' });
  });
});
