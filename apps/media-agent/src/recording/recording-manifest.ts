import fs from 'node:fs/promises';
import path from 'node:path';
import type { RecordingModeration } from '@switchboard/contracts';

/** The connection recording a local recording's files are for (from `media.recordingTarget`). */
export interface ManifestTarget {
  connectionRecordingId: string;
  channelRecordingId: string;
  audioBase: string;
  videoBase: string;
  /** Which kinds the connection recording holds (`recordingMode` may leave one out). */
  hasAudio: boolean;
  hasVideo: boolean;
}

/**
 * One recording of a publisher, kept on disk beside its `.mjr` files (`<id>.json`) from its start
 * until its files are handed over, so that an agent restarted after a crash finishes it.
 */
export interface RecordingManifest {
  /** Local id: Janus writes `<id>-audio-<mindex>.mjr`, `<id>-video-<mindex>.mjr`. */
  id: string;
  applicationId: string;
  channelId: string;
  connectionId: string;
  /** Unix ms. */
  startedAt: number;
  stoppedAt: number | null;
  target: ManifestTarget | null;
  /** Operator mutes and unmutes Janus applied while recording (the media changed then). */
  moderations?: RecordingModeration[];
  /** Why it ended before it was stopped (a crash): the connection recording is marked with it. */
  interrupted?: string;
}

const MANIFEST_EXTENSION = '.json';

/** The agent's recordings directory: manifests, Janus's `.mjr` files and converted files. */
export class RecordingDirectory {
  private prepared?: Promise<void>;

  constructor(readonly dir: string) {}

  /** Creates the directory (once); Janus may run as another user (the test stack runs it as nobody) and writes here. */
  prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await fs.mkdir(this.dir, { recursive: true });
      // A directory of another owner (a volume) is left as its owner made it.
      await fs.chmod(this.dir, 0o777).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EPERM') throw e;
      });
    })();
    return this.prepared;
  }

  /** Written under another name and renamed: a crash leaves the old manifest or the new one. */
  async save(manifest: RecordingManifest): Promise<void> {
    await this.prepare();
    const file = path.join(this.dir, manifest.id + MANIFEST_EXTENSION);
    await fs.writeFile(`${file}.tmp`, JSON.stringify(manifest));
    await fs.rename(`${file}.tmp`, file);
  }

  /** Every manifest left in the directory (an earlier run's recordings), oldest first. */
  async load(): Promise<RecordingManifest[]> {
    const names = (await fs.readdir(this.dir)).filter((name) => name.endsWith(MANIFEST_EXTENSION));
    const manifests = await Promise.all(
      names.map(async (name) => {
        try {
          return JSON.parse(await fs.readFile(path.join(this.dir, name), 'utf8')) as RecordingManifest;
        } catch {
          return null;
        }
      }),
    );
    return manifests.filter((m): m is RecordingManifest => m !== null).sort((a, b) => a.startedAt - b.startedAt);
  }

  /** Janus's files of one recording by kind, lowest media index first. */
  async mjrFiles(id: string): Promise<{ audio: string[]; video: string[] }> {
    const names = (await fs.readdir(this.dir)).filter((n) => n.startsWith(`${id}-`) && n.endsWith('.mjr'));
    const ofKind = (kind: string) =>
      names
        // VideoRoom: `<id>-audio-<mindex>.mjr`; AudioBridge: `<id>-audio.mjr`.
        .map((n) => {
          const match = new RegExp(`^${id}-${kind}(?:-(\\d+))?\\.mjr$`).exec(n);
          return { n, index: match ? (match[1] ?? '0') : undefined };
        })
        .filter((x) => x.index !== undefined)
        .sort((a, b) => Number(a.index) - Number(b.index))
        .map((x) => path.join(this.dir, x.n));
    return { audio: ofKind('audio'), video: ofKind('video') };
  }

  /** Where the converted files of a recording are written. */
  outputDir(id: string): string {
    return path.join(this.dir, `${id}.out`);
  }

  /** Removes every file of a recording, its manifest last. */
  async remove(id: string): Promise<void> {
    const names = (await fs.readdir(this.dir)).filter((n) => n.startsWith(`${id}-`) && n.endsWith('.mjr'));
    await Promise.all(names.map((n) => fs.rm(path.join(this.dir, n), { force: true })));
    await fs.rm(this.outputDir(id), { recursive: true, force: true });
    await fs.rm(path.join(this.dir, id + MANIFEST_EXTENSION), { force: true });
  }
}
