// The media server side of recordings, for tests and demos: writes real audio and video files for a
// recorded connection with ffmpeg test sources (sine tone -> Opus in Ogg, testsrc2 -> VP8 in WebM),
// honouring the mute timeline (silence while audio is muted or disabled, black while video is).
// Plain JavaScript (types in media.d.mts) so that the CLI runs with node alone.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';

/** Runs a tool and resolves with its stdout; rejects with the tail of its stderr. */
export function run(bin, args, { timeoutMs = 120000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => {
      err += c;
      if (err.length > 20000) err = err.slice(-20000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${bin} could not run (${e.message}); install ffmpeg (apt-get install ffmpeg)`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else
        reject(
          new Error(
            `${bin} ${signal ? `was killed by ${signal}` : `exited with ${code}`}: ${err.trim().split('\n').slice(-5).join(' | ')}`,
          ),
        );
    });
  });
}

/** True when ffmpeg and ffprobe can be run. */
export async function ffmpegAvailable() {
  try {
    await run(FFMPEG, ['-hide_banner', '-version']);
    await run(FFPROBE, ['-hide_banner', '-version']);
    return true;
  } catch {
    return false;
  }
}

const secs = (n) => (Math.round(n * 1000) / 1000).toFixed(3);

/**
 * Intervals (seconds from the start of the file) during which `flag` is set, from a timeline of
 * updates `{ at (seconds from the start), audioMuted, videoMuted, audioDisabled, videoDisabled }`.
 */
export function intervals(updates, durationSeconds, flag) {
  const out = [];
  let openedAt = null;
  for (const u of [...updates].sort((a, b) => a.at - b.at)) {
    const on = flag === 'audio' ? Boolean(u.audioMuted || u.audioDisabled) : Boolean(u.videoMuted || u.videoDisabled);
    const at = Math.min(Math.max(u.at, 0), durationSeconds);
    if (on && openedAt === null) openedAt = at;
    if (!on && openedAt !== null) {
      if (at > openedAt) out.push([openedAt, at]);
      openedAt = null;
    }
  }
  if (openedAt !== null && durationSeconds > openedAt) out.push([openedAt, durationSeconds]);
  return out;
}

function enableExpr(ranges) {
  return ranges.map(([a, b]) => `between(t,${secs(a)},${secs(b)})`).join('+');
}

/** ffmpeg arguments of the audio file: a sine tone, silent while muted. */
export function audioArgs({ durationSeconds, frequency = 440, updates = [] }, output) {
  const muted = intervals(updates, durationSeconds, 'audio');
  const filter = muted.length ? ['-af', `volume=enable='${enableExpr(muted)}':volume=0`] : [];
  return [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=${frequency}:sample_rate=48000:duration=${secs(durationSeconds)}`,
    ...filter,
    '-c:a',
    'libopus',
    '-b:a',
    '48k',
    '-f',
    'ogg',
    output,
  ];
}

/** ffmpeg arguments of the video file: testsrc2, black while muted. */
export function videoArgs({ durationSeconds, width = 320, height = 240, frameRate = 15, updates = [] }, output) {
  const muted = intervals(updates, durationSeconds, 'video');
  const filter = muted.length
    ? ['-vf', `drawbox=enable='${enableExpr(muted)}':x=0:y=0:w=iw:h=ih:color=black:t=fill`]
    : [];
  return [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${width}x${height}:rate=${frameRate}:duration=${secs(durationSeconds)}`,
    ...filter,
    '-c:v',
    'libvpx',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-b:v',
    '300k',
    '-pix_fmt',
    'yuv420p',
    '-f',
    'webm',
    output,
  ];
}

/**
 * Writes the files of one recorded connection into `directory` as `<audioBase>.ogg` and
 * `<videoBase>.webm` (each written under a `.part` name, then renamed, so a reader never sees a
 * partial file). `target` is what the recording-service's `media.recordingTarget` query answers.
 * Resolves with the paths written.
 */
export async function writeConnectionMedia(
  target,
  { durationSeconds, frequency, width, height, frameRate, updates } = {},
) {
  const duration =
    durationSeconds ?? Math.max(0.5, ((target.stopTimestamp ?? Date.now()) - target.startTimestamp) / 1000);
  const timeline =
    updates ?? (target.updates ?? []).map((u) => ({ ...u, at: (u.timestamp - target.startTimestamp) / 1000 }));
  fs.mkdirSync(target.directory, { recursive: true });
  const written = { audioFile: null, videoFile: null, durationSeconds: duration };
  const jobs = [];
  if (target.hasAudio !== false) {
    const file = path.join(target.directory, `${target.audioBase}.ogg`);
    jobs.push(
      run(FFMPEG, audioArgs({ durationSeconds: duration, frequency, updates: timeline }, `${file}.part`)).then(() => {
        fs.renameSync(`${file}.part`, file);
        written.audioFile = file;
      }),
    );
  }
  if (target.hasVideo !== false) {
    const file = path.join(target.directory, `${target.videoBase}.webm`);
    jobs.push(
      run(
        FFMPEG,
        videoArgs({ durationSeconds: duration, width, height, frameRate, updates: timeline }, `${file}.part`),
      ).then(() => {
        fs.renameSync(`${file}.part`, file);
        written.videoFile = file;
      }),
    );
  }
  await Promise.all(jobs);
  return written;
}

/** ffprobe summary of a file: container, duration in seconds, streams (type and codec). */
export async function probeFile(file) {
  const out = await run(FFPROBE, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]);
  const json = JSON.parse(out);
  return {
    formatName: json.format?.format_name ?? 'unknown',
    durationSeconds: Number(json.format?.duration ?? 0),
    sizeBytes: Number(json.format?.size ?? 0),
    streams: (json.streams ?? []).map((s) => ({
      type: s.codec_type,
      codec: s.codec_name,
      width: s.width ?? null,
      height: s.height ?? null,
    })),
  };
}

/** Decodes the whole file (every stream) to check that it plays; rejects with ffmpeg's complaint. */
export async function decodeFile(file) {
  await run(FFMPEG, ['-hide_banner', '-nostdin', '-v', 'error', '-xerror', '-i', file, '-f', 'null', '-']);
}
