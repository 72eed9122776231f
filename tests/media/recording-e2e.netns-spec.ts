/**
 * Recordings of real media end to end (issue 24, "What it must show"): the whole control plane with
 * Janus, its media-agent and recording-service; two werift participants publish a real tone and a
 * real VP8 picture through `/sync`; an operator records their channel for 10 s through interface A
 * and mutes one participant's audio and the other's video at their connections (Janus moderates them)
 * from second 3 to 6.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ConnectionRecording } from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import { decodeFile, probeFile } from '../../tools/media/media.mjs';
import { opusToneFrames } from '../../tools/testing/media-opus.js';
import { MediaSessionStack, type MediaParticipant } from '../../tools/testing/media-session-stack.js';
import { vp8TestFrames } from '../../tools/testing/media-vp8.js';
import { OPERATOR, query, startHarness, type Harness } from '../recordings/harness.js';

const run = promisify(execFile);
const CHANNEL = 'recorded-call';
const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/** Mean volume in dB of `[from, to)` seconds of a file (ffmpeg volumedetect; silence is about -91 dB). */
async function meanVolume(file: string, from: number, to: number): Promise<number> {
  const window = ['-ss', from.toFixed(3), '-to', to.toFixed(3), '-i', file];
  const { stderr } = await run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    ...window,
    '-af',
    'volumedetect',
    '-f',
    'null',
    '-',
  ]);
  return Number(/mean_volume: (-?[\d.]+) dB/.exec(stderr)?.[1] ?? -Infinity);
}

/** The silent stretches of a file (ffmpeg silencedetect), seconds from its start. */
async function silences(file: string): Promise<Array<{ start: number; end: number }>> {
  const detect = ['-af', 'silencedetect=noise=-60dB:d=0.5', '-f', 'null', '-'];
  const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostdin', '-i', file, ...detect]);
  const starts = [...stderr.matchAll(/silence_start: (-?[\d.]+)/g)].map((m) => Number(m[1]));
  const ends = [...stderr.matchAll(/silence_end: (-?[\d.]+)/g)].map((m) => Number(m[1]));
  return starts.map((start, i) => ({ start, end: ends[i] ?? Infinity }));
}

/** Mean brightness (0-255) of the left and right halves of the frame at `second` of a video. */
async function halvesBrightness(file: string, second: number): Promise<[number, number]> {
  const { stdout } = await promisify(execFile)(
    'ffmpeg',
    ['-hide_banner', '-nostdin', '-loglevel', 'error', '-ss', String(second), '-i', file].concat([
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      'pipe:1',
    ]),
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  const { streams } = await probeFile(file);
  const width = streams.find((s: { type: string }) => s.type === 'video')!.width as number;
  const sums = [0, 0];
  const counts = [0, 0];
  for (let i = 0; i < stdout.length; i++) {
    const half = i % width < width / 2 ? 0 : 1;
    sums[half] += stdout[i]!;
    counts[half]++;
  }
  return [sums[0]! / counts[0]!, sums[1]! / counts[1]!];
}

describe('a recorded call of two participants, end to end', () => {
  const recordingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rec-e2e-'));
  const downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'rec-e2e-downloads-'));
  fs.chmodSync(recordingsDir, 0o755);
  // Janus runs as nobody: the agent's directory must be reachable for it.
  // The registry's reconciliation ends the connections a crashed agent's room held, once the new agent
  // reports the room cleaned up (not at its default 60 s interval).
  const stack = new MediaSessionStack({
    agentEnv: { MEDIA_RECORDINGS_DIR: path.join(recordingsDir, 'recordings') },
  });
  let h: Harness;
  const channelPath = (channel = CHANNEL) => `/applications/${stack.applicationId}/channels/${channel}`;
  const connectionPath = (user: string, connectionId: string, channel = CHANNEL) =>
    `${channelPath(channel)}/users/${user}/devices/${user}-device/clients/${user}-client/connections/${connectionId}`;

  beforeAll(async () => {
    await stack.start();
    h = await startHarness('rec-e2e', { RECORDINGS_INGEST_TIMEOUT_MS: '60000' }, stack.namespace);
    await h.start();
  }, 90000);

  afterAll(async () => {
    if (process.env.SB_TEST_VERBOSE === '1') process.stdout.write(stack.media?.agent.output() ?? '');
    await stack.stop();
    await h?.close();
    fs.rmSync(recordingsDir, { recursive: true, force: true });
    fs.rmSync(downloads, { recursive: true, force: true });
  });

  /** A signed URL as interface A (text) or interface B (OData `value`) answers it. */
  async function signedUrl(api: 'a' | 'b', route: string): Promise<string> {
    const base = api === 'a' ? `${stack.gateway.url!}/admin/api/v1.0` : stack.management.url!;
    const response = await fetch(`${base}${route}`, { headers: { 'x-api-key': stack.operatorKey } });
    const text = await response.text();
    expect(response.status).toBe(200);
    if (api === 'a') return text.startsWith('"') ? (JSON.parse(text) as string) : text;
    return (JSON.parse(text) as { value: string }).value;
  }

  /** Downloads a URL into a file of the test. */
  async function download(url: string, name: string): Promise<Buffer> {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    fs.writeFileSync(path.join(downloads, name), bytes);
    return bytes;
  }

  /** The interface A and interface B URLs of a connection recording's file all give the same bytes. */
  async function connectionFile(cr: ConnectionRecording, kind: 'audio' | 'video'): Promise<string> {
    const name = kind === 'audio' ? 'AudioUrl' : 'VideoUrl';
    const urls = [
      kind === 'audio' ? cr.audioUrl! : cr.videoUrl!,
      await signedUrl(
        'a',
        `${connectionPath(cr.userId, cr.connectionId, cr.channelId)}/recordings/${cr.id}/${kind}url`,
      ),
      await signedUrl('b', `/ConnectionRecordings/${stack.applicationId}/${cr.id}/${name}`),
    ];
    const files = await Promise.all(urls.map((url, i) => download(url, `${cr.id}-${i}.${kind}`)));
    for (const bytes of files) expect(bytes.equals(files[0]!)).toBe(true);
    expect(files[0]!.length).toBe(kind === 'audio' ? cr.audioFileSize : cr.videoFileSize);
    return path.join(downloads, `${cr.id}-0.${kind}`);
  }

  it('records 10 s of both, the muted stretch silent and in the timeline; the channel file shows both', async () => {
    const participants: MediaParticipant[] = [];
    for (const [user, frequency] of [
      ['alice', 440],
      ['bob', 660],
    ] as const) {
      const participant = await stack.participant(user, CHANNEL);
      await participant.publish(`${user}-up`, {
        audioFrames: opusToneFrames(2, frequency),
        videoFrames: vp8TestFrames(),
      });
      participants.push(participant);
    }
    for (const [i, user] of ['alice', 'bob'].entries())
      await waitFor(
        () => participants[i]!.pushesOf('connection.state', `${user}-up`).some((p) => p.state === 'connected'),
        { description: `${user} connected at Janus` },
      );

    const recordFrom = Date.now();
    await stack.a('PATCH', channelPath(), { recording: true });
    await sleepUntil(recordFrom + 3000);
    await Promise.all([
      stack.a('PATCH', connectionPath('alice', 'alice-up'), { audioMuted: true }),
      stack.a('PATCH', connectionPath('bob', 'bob-up'), { videoMuted: true }),
    ]);
    await sleepUntil(recordFrom + 6000);
    await Promise.all([
      stack.a('PATCH', connectionPath('alice', 'alice-up'), { audioMuted: false }),
      stack.a('PATCH', connectionPath('bob', 'bob-up'), { videoMuted: false }),
    ]);
    await sleepUntil(recordFrom + 10000);
    await stack.a('PATCH', channelPath(), { recording: false });

    const [recording] = await waitFor(
      async () => {
        const list = await query(h, OPERATOR, {
          kind: 'channel.recordings.list',
          applicationId: stack.applicationId,
          channelId: CHANNEL,
        });
        return list.length === 1 && list[0]!.ready ? list : null;
      },
      { timeoutMs: 60000, intervalMs: 500, description: 'the channel recording ready' },
    );
    const crs = await query(h, OPERATOR, {
      kind: 'channelRecording.connectionRecordings.list',
      applicationId: stack.applicationId,
      channelId: CHANNEL,
      channelRecordingId: recording!.id,
    });
    expect(crs.map((cr) => cr.connectionId).sort()).toEqual(['alice-up', 'bob-up']);

    for (const cr of crs) {
      expect(cr).toMatchObject({ ingested: true, audioReady: true, videoReady: true });
      const audio = await connectionFile(cr, 'audio');
      const video = await connectionFile(cr, 'video');
      const seconds = (await probeFile(audio)).durationSeconds;
      const firstFrame = Date.parse(cr.audioFirstFrameTimestamp!);
      process.stdout.write(
        `${cr.connectionId}: ${seconds} s of audio from ${firstFrame - recordFrom} ms after the recording's start\n`,
      );
      expect(Math.abs(seconds - 10)).toBeLessThanOrEqual(0.5);
      expect(Math.abs((await probeFile(video)).durationSeconds - 10)).toBeLessThanOrEqual(0.5);
      const quiet = await silences(audio);
      if (cr.connectionId === 'bob-up') {
        expect(quiet).toEqual([]);
        continue;
      }
      // Alice's audio: loud, silent from second 3 to 6 of the recording, loud again.
      const mutedAt = (recordFrom + 3000 - firstFrame) / 1000;
      const unmutedAt = (recordFrom + 6000 - firstFrame) / 1000;
      expect(await meanVolume(audio, 0.3, mutedAt - 0.5)).toBeGreaterThan(-40);
      expect(await meanVolume(audio, mutedAt + 0.5, unmutedAt - 0.5)).toBeLessThan(-80);
      expect(await meanVolume(audio, unmutedAt + 0.5, seconds - 0.3)).toBeGreaterThan(-40);
      expect(quiet).toHaveLength(1);
      // The timeline holds the mute and the unmute at the times the media changed (+-250 ms).
      const mediaMuted = firstFrame + quiet[0]!.start * 1000;
      const mediaUnmuted = firstFrame + quiet[0]!.end * 1000;
      const silenced = (u: ConnectionRecording['updates'][number]) => u.audioMuted || u.audioDisabled;
      const changes = cr.updates.filter((u, i) => i > 0 && silenced(u) !== silenced(cr.updates[i - 1]!));
      process.stdout.write(
        `timeline ${JSON.stringify(cr.updates)}; media muted ${new Date(mediaMuted).toISOString()} ` +
          `unmuted ${new Date(mediaUnmuted).toISOString()}\n`,
      );
      expect(changes.map(silenced)).toEqual([true, false]);
      expect(Math.abs(Date.parse(changes[0]!.timestamp) - mediaMuted)).toBeLessThanOrEqual(250);
      expect(Math.abs(Date.parse(changes[1]!.timestamp) - mediaUnmuted)).toBeLessThanOrEqual(250);
    }

    // The channel file: both participants' tiles show their picture at second 8; it lasts the recording's span.
    const urls = [
      recording!.url!,
      await signedUrl('a', `${channelPath()}/recordings/${recording!.id}/url`),
      await signedUrl('b', `/ChannelRecordings/${stack.applicationId}/${CHANNEL}/${recording!.id}/Url`),
    ];
    const channelFiles = await Promise.all(urls.map((url, i) => download(url, `channel-${i}.webm`)));
    for (const bytes of channelFiles) expect(bytes.equals(channelFiles[0]!)).toBe(true);
    const channelFile = path.join(downloads, 'channel-0.webm');
    const span = (Date.parse(recording!.stopTimestamp!) - Date.parse(recording!.startTimestamp)) / 1000;
    expect(Math.abs((await probeFile(channelFile)).durationSeconds - span)).toBeLessThanOrEqual(0.5);
    const [left, right] = await halvesBrightness(channelFile, 8);
    expect(left).toBeGreaterThan(40);
    expect(right).toBeGreaterThan(40);
    // Bob's video muted from second 3 to 6: his tile is black then, Alice's is not.
    const whileMuted = await halvesBrightness(channelFile, 4.5);
    expect(Math.min(...whileMuted)).toBeLessThan(5);
    expect(Math.max(...whileMuted)).toBeGreaterThan(40);
  }, 150000);

  it('media-agent killed during a recording: the recording ends, playable, and is marked', async () => {
    const channel = 'agent-crash';
    const carol = await stack.participant('carol', channel);
    await carol.publish('carol-up', { audioFrames: opusToneFrames(2, 550), videoFrames: vp8TestFrames() });
    await waitFor(() => carol.pushesOf('connection.state', 'carol-up').some((p) => p.state === 'connected'), {
      description: 'carol connected at Janus',
    });
    const recordFrom = Date.now();
    await stack.a('PATCH', channelPath(channel), { recording: true });
    await sleepUntil(recordFrom + 4000);
    const killedAt = Date.now();
    await stack.media.restartAgent();

    const [recording] = await waitFor(
      async () => {
        const list = await query(h, OPERATOR, {
          kind: 'channel.recordings.list',
          applicationId: stack.applicationId,
          channelId: channel,
        });
        return list.length === 1 && list[0]!.ready ? list : null;
      },
      { timeoutMs: 60000, intervalMs: 500, description: 'the channel recording ready' },
    );
    const [cr] = await query(h, OPERATOR, {
      kind: 'channelRecording.connectionRecordings.list',
      applicationId: stack.applicationId,
      channelId: channel,
      channelRecordingId: recording!.id,
    });
    // Closed (the registry ends the connection its server lost), with the files written up to the crash, and marked.
    expect(cr).toMatchObject({ ingested: true, audioReady: true, videoReady: true });
    expect(Date.parse(cr!.stopTimestamp!) - killedAt).toBeLessThan(15000);
    expect(JSON.parse(cr!.metadata!)).toMatchObject({ interrupted: true, interruptedReason: 'media-agent restarted' });
    const audio = await connectionFile(cr!, 'audio');
    await decodeFile(audio);
    expect((await probeFile(audio)).durationSeconds).toBeGreaterThan((killedAt - recordFrom) / 1000 - 0.5);
    expect(await meanVolume(audio, 0.3, 3)).toBeGreaterThan(-40);
  }, 120000);
});
