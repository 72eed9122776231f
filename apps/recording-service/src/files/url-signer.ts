import { createHmac, timingSafeEqual } from 'node:crypto';

/** Which file of which record a token grants: the channel file, its audio or video file, or a connection file. */
export type FileKind = 'channel' | 'channel.audio' | 'channel.video' | 'connection.audio' | 'connection.video';

const KIND_CODES: Record<FileKind, string> = {
  channel: 'c',
  'channel.audio': 'ca',
  'channel.video': 'cv',
  'connection.audio': 'na',
  'connection.video': 'nv',
};
const KINDS_BY_CODE = new Map(Object.entries(KIND_CODES).map(([k, v]) => [v, k as FileKind]));

export interface FileGrant {
  kind: FileKind;
  /** Channel or connection recording id. */
  recordingId: string;
  /** Unix seconds. */
  expiresAt: number;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/**
 * Signed, expiring file links: `<kind>.<recordingId>.<expiry>.<signature>`, the signature being
 * HMAC-SHA256 (RECORDINGS_URL_SECRET) over the first three parts. The token names a record, never
 * a path: the service looks the file up when the link is used, so a deleted recording's links die.
 */
export class UrlSigner {
  constructor(
    private readonly secret: string,
    private readonly baseUrl: string,
    private readonly ttlSeconds: number,
  ) {}

  token(kind: FileKind, recordingId: string, now = Date.now()): string {
    const expiresAt = Math.floor(now / 1000) + this.ttlSeconds;
    const body = `${KIND_CODES[kind]}.${recordingId}.${expiresAt}`;
    return `${body}.${this.sign(body)}`;
  }

  url(kind: FileKind, recordingId: string, now = Date.now()): string {
    return `${this.baseUrl.replace(/\/+$/, '')}/files/${this.token(kind, recordingId, now)}`;
  }

  /** The grant of a valid, unexpired token; null otherwise (bad format, bad signature, expired). */
  verify(token: string, now = Date.now()): FileGrant | null {
    if (token.length > 256) return null;
    const parts = token.split('.');
    if (parts.length !== 4) return null;
    const [code, recordingId, exp, signature] = parts as [string, string, string, string];
    const kind = KINDS_BY_CODE.get(code);
    if (!kind || !/^[0-9a-f-]{36}$/i.test(recordingId) || !/^\d{1,12}$/.test(exp)) return null;
    const expected = Buffer.from(this.sign(`${code}.${recordingId}.${exp}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    const expiresAt = Number(exp);
    if (expiresAt * 1000 < now) return null;
    return { kind, recordingId, expiresAt };
  }

  private sign(body: string): string {
    return b64url(createHmac('sha256', this.secret).update(body).digest());
  }
}

export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a Range header for a file of `size` bytes: one `bytes=` range (first-last, first-, -suffix).
 * Returns undefined when there is no usable single range (serve the whole file), 'unsatisfiable'
 * when the range lies outside the file (416).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const [, first, last] = m as unknown as [string, string, string];
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
