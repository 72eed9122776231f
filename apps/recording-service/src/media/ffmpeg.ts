import { spawn } from 'node:child_process';

export interface ProbedStream {
  index: number;
  codecType: string;
  codecName: string;
  width?: number;
  height?: number;
}

export interface ProbeResult {
  formatName: string;
  /** Seconds; 0 when unknown. */
  durationSeconds: number;
  /** Seconds of the first packet (never negative). */
  startSeconds: number;
  streams: ProbedStream[];
}

export class ToolError extends Error {
  override readonly name = 'ToolError';
}

/** A tool killed because `signal` was aborted (the service stops): the work was not done, nor did it fail. */
export class ToolInterrupted extends Error {
  override readonly name = 'ToolInterrupted';
}

/**
 * Runs a tool, resolving with stdout; rejects with the tail of stderr. Killed after `timeoutMs`, or
 * when `signal` is aborted (then rejects with ToolInterrupted).
 */
export function runTool(
  bin: string,
  args: string[],
  { timeoutMs = 300000, signal }: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ToolInterrupted(`${bin} was not started: stopping`));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const interrupt = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', interrupt, { once: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
      if (err.length > 20000) err = err.slice(-20000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', interrupt);
      reject(new ToolError(`${bin} could not run: ${e.message}`));
    });
    child.once('close', (code, killedBy) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', interrupt);
      if (code === 0) resolve(out);
      else if (signal?.aborted) reject(new ToolInterrupted(`${bin} was stopped: the service is stopping`));
      else
        reject(
          new ToolError(
            `${bin} ${killedBy ? `was killed by ${killedBy}` : `exited with ${code}`}: ${err.trim().split('\n').slice(-5).join(' | ')}`,
          ),
        );
    });
  });
}

export async function probe(ffprobe: string, file: string): Promise<ProbeResult> {
  const out = await runTool(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], {
    timeoutMs: 60000,
  });
  const json = JSON.parse(out) as {
    format?: { format_name?: string; duration?: string; start_time?: string };
    streams?: Array<{ index: number; codec_type?: string; codec_name?: string; width?: number; height?: number }>;
  };
  const streams = (json.streams ?? []).map((s) => ({
    index: s.index,
    codecType: s.codec_type ?? 'unknown',
    codecName: s.codec_name ?? 'unknown',
    ...(s.width ? { width: s.width } : {}),
    ...(s.height ? { height: s.height } : {}),
  }));
  const duration = Number(json.format?.duration ?? 0);
  const start = Number(json.format?.start_time ?? 0);
  return {
    formatName: json.format?.format_name ?? 'unknown',
    durationSeconds: Number.isFinite(duration) ? duration : 0,
    startSeconds: Number.isFinite(start) && start > 0 ? start : 0,
    streams,
  };
}

/** MIME-style description of a probed file (`audioContent`, `videoContent`). */
export function describeContent(p: ProbeResult, type: 'audio' | 'video'): string | null {
  const s = p.streams.find((x) => x.codecType === type);
  if (!s) return null;
  const container =
    p.formatName.includes('webm') || p.formatName.includes('matroska')
      ? type === 'audio'
        ? 'audio/webm'
        : 'video/webm'
      : p.formatName.includes('ogg')
        ? 'audio/ogg'
        : `${type}/${p.formatName.split(',')[0]}`;
  const size = s.width && s.height ? `; width=${s.width}; height=${s.height}` : '';
  return `${container}; codecs=${s.codecName}${size}`;
}

export interface MuxInput {
  /** Where this connection's media starts, seconds after the channel recording start. */
  offsetSeconds: number;
  /** Where its video starts, when not at `offsetSeconds` (the first video frame came later or earlier). */
  videoOffsetSeconds?: number;
  audioFile: string | null;
  videoFile: string | null;
  /** Stretches (channel seconds, from-to) where its audio / video was muted: silence / black there. */
  muted?: { audio: Array<[number, number]>; video: Array<[number, number]> };
}

export interface MuxPlan {
  /** ffmpeg arguments, output last. */
  args: string[];
  hasAudio: boolean;
  hasVideo: boolean;
  /** Extension of the output (`.webm` with video, `.ogg` audio only). */
  extension: '.webm' | '.ogg';
}

export const TILE_WIDTH = 320;
export const TILE_HEIGHT = 240;
export const FRAME_RATE = 15;

const secs = (n: number) => (Math.round(n * 1000) / 1000).toFixed(3);

/**
 * The mux: every connection's video scaled into one tile of a grid (black before it starts and
 * after it ends), every connection's audio delayed to its offset and mixed; the output lasts the
 * channel recording's duration. VP8 + Opus in WebM (Opus in Ogg when no connection has video).
 */
export function planMux(inputs: MuxInput[], durationSeconds: number, output: string): MuxPlan {
  const args = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error'];
  const filters: string[] = [];
  const videoLabels: string[] = [];
  const audioLabels: string[] = [];
  let n = 0;
  const total = secs(Math.max(durationSeconds, 0.1));
  for (const input of inputs) {
    const offset = Math.max(0, input.offsetSeconds);
    if (input.videoFile) {
      args.push('-i', input.videoFile);
      const label = `v${videoLabels.length}`;
      const videoOffset = Math.max(0, input.videoOffsetSeconds ?? input.offsetSeconds);
      // The frame rate filter repeats the last frame over gaps (a moderated stream sends nothing).
      filters.push(
        `[${n}:v]setpts=PTS-STARTPTS,scale=${TILE_WIDTH}:${TILE_HEIGHT}:force_original_aspect_ratio=decrease,pad=${TILE_WIDTH}:${TILE_HEIGHT}:(ow-iw)/2:(oh-ih)/2:color=black,fps=${FRAME_RATE},format=yuv420p,tpad=start_duration=${secs(videoOffset)}:stop_duration=${total}:color=black${blackOut(input.muted?.video)}[${label}]`,
      );
      videoLabels.push(label);
      n++;
    }
    if (input.audioFile) {
      args.push('-i', input.audioFile);
      const label = `a${audioLabels.length}`;
      const ms = Math.round(offset * 1000);
      filters.push(
        `[${n}:a]aresample=48000:async=1:first_pts=0,aformat=channel_layouts=stereo,adelay=${ms}|${ms}${silence(input.muted?.audio)}[${label}]`,
      );
      audioLabels.push(label);
      n++;
    }
  }
  const hasVideo = videoLabels.length > 0;
  const hasAudio = audioLabels.length > 0;
  if (!hasVideo && !hasAudio) throw new ToolError('nothing to mux: no connection recording has a file');
  if (hasVideo) {
    if (videoLabels.length === 1) {
      filters.push(`[${videoLabels[0]}]null[vout]`);
    } else {
      const cols = Math.ceil(Math.sqrt(videoLabels.length));
      const layout = videoLabels
        .map((_, i) => `${(i % cols) * TILE_WIDTH}_${Math.floor(i / cols) * TILE_HEIGHT}`)
        .join('|');
      filters.push(
        `${videoLabels.map((l) => `[${l}]`).join('')}xstack=inputs=${videoLabels.length}:layout=${layout}:fill=black[vout]`,
      );
    }
  }
  if (hasAudio) {
    const mix =
      audioLabels.length === 1
        ? `[${audioLabels[0]}]anull`
        : `${audioLabels.map((l) => `[${l}]`).join('')}amix=inputs=${audioLabels.length}:duration=longest:dropout_transition=0:normalize=0`;
    filters.push(`${mix},apad=whole_dur=${total}[aout]`);
  }
  args.push('-filter_complex', filters.join(';'));
  if (hasVideo)
    args.push(
      '-map',
      '[vout]',
      '-c:v',
      'libvpx',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
      '-b:v',
      '400k',
      '-g',
      String(FRAME_RATE * 2),
    );
  if (hasAudio) args.push('-map', '[aout]', '-c:a', 'libopus', '-b:a', '64k');
  args.push('-t', total, '-f', hasVideo ? 'webm' : 'ogg', output);
  return { args, hasAudio, hasVideo, extension: hasVideo ? '.webm' : '.ogg' };
}

const between = (stretches: Array<[number, number]>) =>
  stretches.map(([from, to]) => `between(t,${secs(from)},${secs(to)})`).join('+');

/** Black over the muted stretches of a tile (a moderated stream's last frame would stay otherwise). */
const blackOut = (stretches: Array<[number, number]> = []) =>
  stretches.length ? `,drawbox=color=black:t=fill:enable='${between(stretches)}'` : '';

/** Silence over the muted stretches (what a client still sends while it says it is muted is not heard). */
const silence = (stretches: Array<[number, number]> = []) =>
  stretches.length ? `,volume=0:enable='${between(stretches)}'` : '';

/** Copies one kind of stream of a muxed file into its own file (no re-encoding). */
export function extractArgs(input: string, type: 'audio' | 'video', output: string): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    '-i',
    input,
    '-map',
    type === 'audio' ? '0:a' : '0:v',
    '-c',
    'copy',
    '-f',
    type === 'audio' ? 'ogg' : 'webm',
    output,
  ];
}
