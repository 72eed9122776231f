import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { moveFile, pruneEmptyDirs, removeTree, sizeOf } from '../pipeline/files.js';
import { contentTypeOf, RecordingPaths } from './paths.js';
import { S3Client, type S3Options } from './s3-client.js';
import { parseRange } from './url-signer.js';

/** Injection token of the StorageTarget. */
export const STORAGE = Symbol('STORAGE');

export interface Stored {
  /** What `filePath` shows: an absolute path (local) or `s3://<bucket>/<key>`. */
  location: string;
  key: string;
  size: number;
}

export interface Opened {
  status: 200 | 206 | 416;
  size: number;
  headers: Record<string, string>;
  body: Readable | null;
}

/**
 * Where finished recording files live: a local directory (`RECORDINGS_STORAGE_DIR`, default) or an
 * S3-compatible bucket (`RECORDINGS_S3_*`). Object keys are
 * `<organizationId>/<applicationId>/<channelId>/<channelRecordingId>/<file name>` in both.
 */
export interface StorageTarget {
  readonly kind: 'local' | 's3';
  /** Whether `location` already is in the target (a move that crashed half-way is resumed). */
  holds(location: string): boolean;
  /**
   * Moves a work file into the target (the work file is gone afterwards). Resumable: when the work
   * file is gone but `key` is in the target, an earlier attempt moved it and was cut off before the
   * move was recorded (a later file of the step failed, or the process died); it is taken as stored.
   */
  put(file: string, key: string): Promise<Stored>;
  /** Streams a stored file, honouring a Range header; null when it does not exist. */
  open(location: string, range: string | undefined): Promise<Opened | null>;
  /**
   * Removes stored files (missing ones are fine) and everything under the recording's prefix (local:
   * its directory; S3: its listed objects). Idempotent; throws when the target fails.
   */
  remove(locations: string[], recordingPrefix: string): Promise<void>;
  /** `recordingPath` of a channel recording in the target. */
  recordingPath(prefix: string): string;
}

/** A work file that is not there (ENOENT). */
function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

export class LocalStorage implements StorageTarget {
  readonly kind = 'local';
  constructor(private readonly paths: RecordingPaths) {}

  holds(location: string): boolean {
    return location.startsWith(this.paths.storageRoot + path.sep);
  }

  async put(file: string, key: string): Promise<Stored> {
    const dest = this.paths.storagePath(key);
    if (file !== dest) {
      try {
        await moveFile(file, dest);
      } catch (e) {
        if (!isMissing(e) || (await sizeOf(dest)) === null) throw e;
      }
    }
    return { location: dest, key, size: (await fs.promises.stat(dest)).size };
  }

  async open(location: string, rangeHeader: string | undefined): Promise<Opened | null> {
    if (!this.holds(location)) return null;
    const stat = await fs.promises.stat(location).catch(() => null);
    if (!stat?.isFile()) return null;
    const size = stat.size;
    const range = parseRange(rangeHeader, size);
    const headers: Record<string, string> = { 'content-type': contentTypeOf(location), 'accept-ranges': 'bytes' };
    if (range === 'unsatisfiable')
      return { status: 416, size, headers: { ...headers, 'content-range': `bytes */${size}` }, body: null };
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    headers['content-length'] = String(size === 0 ? 0 : end - start + 1);
    if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    return {
      status: range ? 206 : 200,
      size,
      headers,
      body: size === 0 ? null : fs.createReadStream(location, { start, end }),
    };
  }

  async remove(locations: string[], recordingPrefix: string): Promise<void> {
    for (const l of locations) if (this.holds(l)) await fs.promises.rm(l, { force: true });
    const dir = this.paths.storagePath(recordingPrefix);
    await removeTree(dir);
    await pruneEmptyDirs(path.dirname(dir), this.paths.storageRoot);
  }

  recordingPath(prefix: string): string {
    return this.paths.storagePath(prefix);
  }
}

export class S3Storage implements StorageTarget {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly prefix: string;

  constructor(o: S3Options) {
    this.client = new S3Client(o);
    this.prefix = `s3://${o.bucket}/`;
  }

  holds(location: string): boolean {
    return location.startsWith(this.prefix);
  }

  private keyOf(location: string): string {
    return location.slice(this.prefix.length);
  }

  async put(file: string, key: string): Promise<Stored> {
    let size: number;
    try {
      size = await this.client.putFile(key, file, contentTypeOf(file));
    } catch (e) {
      const stored = isMissing(e) ? await this.client.head(key) : null;
      if (stored === null) throw e;
      size = stored;
    }
    await fs.promises.rm(file, { force: true });
    return { location: `${this.prefix}${key}`, key, size };
  }

  async open(location: string, range: string | undefined): Promise<Opened | null> {
    if (!this.holds(location)) return null;
    const r = await this.client.get(
      this.keyOf(location),
      range && /^bytes=\d*-\d*$/.test(range.trim()) ? range.trim() : undefined,
    );
    if (r.status === 404 || r.status === 403) {
      r.body.resume();
      return null;
    }
    if (r.status !== 200 && r.status !== 206 && r.status !== 416) {
      r.body.resume();
      throw new Error(`S3 GET answered ${r.status}`);
    }
    const headers: Record<string, string> = { 'content-type': contentTypeOf(location), 'accept-ranges': 'bytes' };
    for (const h of ['content-length', 'content-range'] as const) {
      const v = r.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    const total = /\/(\d+)$/.exec(headers['content-range'] ?? '')?.[1];
    const size = Number(total ?? headers['content-length'] ?? 0);
    if (r.status === 416) {
      r.body.resume();
      return {
        status: 416,
        size,
        headers: { ...headers, 'content-range': headers['content-range'] ?? 'bytes */*' },
        body: null,
      };
    }
    return { status: r.status as 200 | 206, size, headers, body: r.body };
  }

  /**
   * Deletes the named objects, then every object under the recording's prefix (ListObjectsV2: an
   * object stored there that no row names, e.g. uploaded by a move the deletion overtook, goes too;
   * the credentials need s3:ListBucket). Throws when the store fails, so the removal is retried.
   */
  async remove(locations: string[], recordingPrefix: string): Promise<void> {
    for (const l of locations) if (this.holds(l)) await this.client.delete(this.keyOf(l));
    for (const key of await this.client.list(`${recordingPrefix}/`)) await this.client.delete(key);
  }

  recordingPath(prefix: string): string {
    return `${this.prefix}${prefix}`;
  }
}
