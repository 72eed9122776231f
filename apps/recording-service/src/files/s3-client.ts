import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';

/**
 * A minimal S3-compatible client: PUT (from a file), GET (optionally a byte range, streamed), HEAD,
 * DELETE and ListObjectsV2, each signed with AWS Signature Version 4 (header form). No SDK: the
 * service needs five calls.
 */
export interface S3Options {
  /** e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000 */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** true: `<endpoint>/<bucket>/<key>`; false: `<bucket>.<endpoint host>/<key>`. */
  pathStyle: boolean;
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it (unreserved characters kept; `/` kept when `path`). */
export function uriEncode(text: string, path = false): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(c) || (path && c === '/')) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export interface SignInput {
  method: string;
  url: URL;
  /** Headers to sign (lower-case names); `host`, `x-amz-date` and `x-amz-content-sha256` are added. */
  headers: Record<string, string>;
  payloadHash: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** `YYYYMMDDTHHMMSSZ` */
  amzDate: string;
  service?: string;
}

/** Signs a request: returns every header to send, `authorization` included. */
export function signV4(i: SignInput): Record<string, string> {
  const service = i.service ?? 's3';
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(i.headers).map(([k, v]) => [k.toLowerCase(), v])),
    host: i.url.host,
    'x-amz-date': i.amzDate,
    'x-amz-content-sha256': i.payloadHash,
  };
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const query = [...i.url.searchParams.entries()]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalUri = uriEncode(decodeURIComponent(i.url.pathname), true);
  const canonicalRequest = [i.method, canonicalUri, query, canonicalHeaders, signedHeaders, i.payloadHash].join('\n');
  const day = i.amzDate.slice(0, 8);
  const scope = `${day}/${i.region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', i.amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${i.secretAccessKey}`, day), i.region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${i.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

export function amzDate(now = new Date()): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

export interface S3Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Readable;
}

export class S3Error extends Error {
  override readonly name = 'S3Error';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class S3Client {
  constructor(private readonly o: S3Options) {}

  objectUrl(key: string): URL {
    const base = new URL(this.o.endpoint);
    const encodedKey = key
      .split('/')
      .map((s) => uriEncode(s))
      .join('/');
    if (this.o.pathStyle)
      return new URL(`${base.origin}${base.pathname.replace(/\/+$/, '')}/${uriEncode(this.o.bucket)}/${encodedKey}`);
    return new URL(`${base.protocol}//${this.o.bucket}.${base.host}${base.pathname.replace(/\/+$/, '')}/${encodedKey}`);
  }

  /** The bucket itself (`<endpoint>/<bucket>` or `<bucket>.<host>/`) with a query (encoded as SigV4 signs it). */
  bucketUrl(query: Record<string, string>): URL {
    const base = new URL(this.o.endpoint);
    const root = base.pathname.replace(/\/+$/, '');
    const url = this.o.pathStyle
      ? new URL(`${base.origin}${root}/${uriEncode(this.o.bucket)}`)
      : new URL(`${base.protocol}//${this.o.bucket}.${base.host}${root}/`);
    url.search = Object.entries(query)
      .map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`)
      .join('&');
    return url;
  }

  private request(
    method: string,
    key: string | URL,
    extra: Record<string, string>,
    payloadHash: string,
    body?: () => Readable,
    contentLength?: number,
  ): Promise<S3Response> {
    const url = typeof key === 'string' ? this.objectUrl(key) : key;
    const headers = signV4({
      method,
      url,
      headers: { ...extra, ...(contentLength !== undefined ? { 'content-length': String(contentLength) } : {}) },
      payloadHash,
      region: this.o.region,
      accessKeyId: this.o.accessKeyId,
      secretAccessKey: this.o.secretAccessKey,
      amzDate: amzDate(),
    });
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, { method, headers, timeout: 60000 }, (res) =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }),
      );
      req.on('timeout', () => req.destroy(new Error(`S3 ${method} timed out`)));
      req.on('error', reject);
      if (body)
        body()
          .on('error', (e) => req.destroy(e))
          .pipe(req);
      else req.end();
    });
  }

  private static async drain(r: S3Response): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of r.body) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8').slice(0, 500);
  }

  /** Uploads a local file (its SHA-256 is signed, so a corrupted upload is refused by the store). */
  async putFile(key: string, file: string, contentType: string): Promise<number> {
    const size = (await fs.promises.stat(file)).size;
    const hash = createHash('sha256');
    for await (const c of fs.createReadStream(file)) hash.update(c as Buffer);
    const r = await this.request(
      'PUT',
      key,
      { 'content-type': contentType },
      hash.digest('hex'),
      () => fs.createReadStream(file),
      size,
    );
    const text = await S3Client.drain(r);
    if (r.status < 200 || r.status >= 300) throw new S3Error(r.status, `S3 PUT ${key} answered ${r.status}: ${text}`);
    return size;
  }

  /** Streams an object, or a byte range of it (`range` is a Range header value). */
  async get(key: string, range?: string): Promise<S3Response> {
    return this.request('GET', key, range ? { range } : {}, EMPTY_SHA256);
  }

  /** The size of an object, or null when there is none. */
  async head(key: string): Promise<number | null> {
    const r = await this.request('HEAD', key, {}, EMPTY_SHA256);
    r.body.resume();
    if (r.status === 404) return null;
    if (r.status !== 200) throw new S3Error(r.status, `S3 HEAD ${key} answered ${r.status}`);
    return Number(r.headers['content-length'] ?? 0);
  }

  /**
   * The keys of the objects whose key starts with `prefix` (ListObjectsV2, every page). Throws an
   * S3Error with the status when the store refuses (403: no s3:ListBucket permission).
   */
  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    for (;;) {
      const r = await this.request(
        'GET',
        this.bucketUrl({ 'list-type': '2', prefix, ...(token ? { 'continuation-token': token } : {}) }),
        {},
        EMPTY_SHA256,
      );
      const chunks: Buffer[] = [];
      for await (const c of r.body) chunks.push(c as Buffer);
      const xml = Buffer.concat(chunks).toString('utf8');
      if (r.status !== 200) throw new S3Error(r.status, `S3 LIST ${prefix} answered ${r.status}: ${xml.slice(0, 500)}`);
      const page = parseListObjectsV2(xml);
      keys.push(...page.keys);
      if (!page.truncated || !page.nextToken) return keys;
      token = page.nextToken;
    }
  }

  async delete(key: string): Promise<void> {
    const r = await this.request('DELETE', key, {}, EMPTY_SHA256);
    const text = await S3Client.drain(r);
    if (r.status !== 204 && r.status !== 200 && r.status !== 404)
      throw new S3Error(r.status, `S3 DELETE ${key} answered ${r.status}: ${text}`);
  }
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function xmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_m, e: string) =>
    e.startsWith('#x')
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : XML_ENTITIES[e]!,
  );
}

/** The keys, `IsTruncated` and `NextContinuationToken` of a ListObjectsV2 answer (`ListBucketResult`). */
export function parseListObjectsV2(xml: string): { keys: string[]; truncated: boolean; nextToken: string | null } {
  const keys = [...xml.matchAll(/<Contents>[\s\S]*?<Key>([\s\S]*?)<\/Key>[\s\S]*?<\/Contents>/g)].map((m) =>
    xmlText(m[1]!),
  );
  const truncated = /<IsTruncated>\s*true\s*<\/IsTruncated>/i.test(xml);
  const token = /<NextContinuationToken>([\s\S]*?)<\/NextContinuationToken>/.exec(xml)?.[1];
  return { keys, truncated, nextToken: token === undefined ? null : xmlText(token) };
}
