import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ConvertedFile {
  file: string;
  /** Unix ms of the first frame (the `.mjr` header), null when unknown. */
  firstFrameMs: number | null;
}

export interface ConverterOptions {
  janusPpRecPath: string;
  ffmpegPath: string;
  /** Longest a single janus-pp-rec or ffmpeg run may take. */
  timeoutMs: number;
}

/**
 * What janus-pp-rec writes per codec (`janus-pp-rec -F`), and the codecs it writes only as WAV,
 * which ffmpeg then encodes to Opus in Ogg (a container change and a smaller file).
 */
const DIRECT_EXTENSION: Record<string, string> = {
  opus: 'ogg',
  multiopus: 'ogg',
  vp8: 'webm',
  vp9: 'webm',
  h264: 'mp4',
  h265: 'mp4',
  av1: 'mp4',
};
const WAV_CODECS = new Set(['pcmu', 'pcma', 'g711', 'g722', 'l16']);

/** Turns Janus `.mjr` recordings into playable files (janus-pp-rec, then ffmpeg where needed). */
export class MjrConverter {
  constructor(private readonly options: ConverterOptions) {}

  /** Why janus-pp-rec cannot run (a sentence), or null when it can. */
  async unavailable(): Promise<string | null> {
    try {
      await this.exec(this.options.janusPpRecPath, ['-F']);
      return null;
    } catch (e) {
      return `${this.options.janusPpRecPath} cannot run (${(e as Error).message.split('\n')[0]})`;
    }
  }

  /**
   * The header of a `.mjr` (`janus-pp-rec -j`): its codec and the wall-clock time of its first
   * packet (`u`, µs), which is time 0 of the converted file; null when it holds no media.
   */
  async headerOf(mjr: string): Promise<{ codec: string; firstPacketMs: number | null } | null> {
    try {
      const { stdout } = await this.exec(this.options.janusPpRecPath, ['-j', mjr]);
      const header = JSON.parse(stdout.trim() || 'null') as { c?: unknown; u?: unknown } | null;
      if (typeof header?.c !== 'string') return null;
      const firstPacketMs = typeof header.u === 'number' && header.u > 0 ? Math.round(header.u / 1000) : null;
      return { codec: header.c.toLowerCase(), firstPacketMs };
    } catch {
      return null;
    }
  }

  /**
   * Converts `mjr` into `<outDir>/<base>.<ext>` (written under another name, then renamed, so a
   * reader never sees half a file). Resolves to the file and the wall-clock time of its first
   * frame, or null when the `.mjr` holds no media.
   */
  async convert(mjr: string, outDir: string, base: string): Promise<ConvertedFile | null> {
    const header = await this.headerOf(mjr);
    if (!header) return null;
    return { file: await this.convertCodec(mjr, header.codec, outDir, base), firstFrameMs: header.firstPacketMs };
  }

  private async convertCodec(mjr: string, codec: string, outDir: string, base: string): Promise<string> {
    await fs.mkdir(outDir, { recursive: true });
    const direct = DIRECT_EXTENSION[codec];
    if (direct) return this.publish(await this.ppRec(mjr, path.join(outDir, `${base}.part.${direct}`)), base, direct);
    if (!WAV_CODECS.has(codec)) throw new Error(`cannot convert a ${codec} recording`);
    const wav = await this.ppRec(mjr, path.join(outDir, `${base}.part.wav`));
    const ogg = path.join(outDir, `${base}.part.ogg`);
    await this.exec(
      this.options.ffmpegPath,
      ['-hide_banner', '-loglevel', 'error', '-y', '-i', wav].concat(['-c:a', 'libopus', '-b:a', '48k', ogg]),
    );
    await fs.rm(wav, { force: true });
    return this.publish(ogg, base, 'ogg');
  }

  private async ppRec(mjr: string, output: string): Promise<string> {
    await this.exec(this.options.janusPpRecPath, [mjr, output]);
    const size = (await fs.stat(output).catch(() => null))?.size ?? 0;
    if (size === 0) throw new Error(`janus-pp-rec wrote nothing for ${path.basename(mjr)}`);
    return output;
  }

  private async publish(file: string, base: string, extension: string): Promise<string> {
    const final = path.join(path.dirname(file), `${base}.${extension}`);
    await fs.rename(file, final);
    return final;
  }

  private exec(command: string, args: string[]) {
    return run(command, args, { timeout: this.options.timeoutMs, maxBuffer: 4 * 1024 * 1024 });
  }
}
