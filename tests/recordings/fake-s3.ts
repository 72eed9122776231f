/**
 * A small S3-compatible server for the tests: PUT, GET (with Range), HEAD and DELETE of objects in
 * memory and ListObjectsV2 of the bucket, path-style URLs, every request's AWS SigV4 signature
 * checked (403 otherwise) and the payload hash of uploads checked against the body.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signV4 } from '../../apps/recording-service/src/files/s3-client.js';

export interface FakeS3 {
  url: string;
  objects: Map<string, { body: Buffer; contentType: string }>;
  rejected: string[];
  /**
   * Makes the `n`-th PUT from now (1: the next one) answer `status` without storing anything: a store's passing error.
   */
  failPut(n: number, status?: number): void;
  /**
   * Makes every DELETE and listing answer `status` without doing anything (the store fails removals) until `restore()`.
   */
  failRemovals(status?: number): void;
  restore(): void;
  close(): Promise<void>;
}

/** An AWS Signature Version 4 Authorization header: key id, date, region, signed headers, signature. */
const AUTHORIZATION = new RegExp(
  String.raw`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, ` +
    String.raw`SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$`,
);

export async function startFakeS3(o: {
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}): Promise<FakeS3> {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const rejected: string[] = [];
  const failing = new Map<number, number>();
  let removalsDown: number | null = null;
  let puts = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      const auth = AUTHORIZATION.exec(req.headers.authorization ?? '');
      const fail = (status: number, why: string) => {
        rejected.push(`${req.method} ${url.pathname}: ${why}`);
        res.writeHead(status, { 'content-type': 'application/xml' }).end(`<Error><Code>${why}</Code></Error>`);
      };
      if (!auth || auth[1] !== o.accessKeyId || auth[3] !== o.region) return fail(403, 'InvalidAccessKeyId');
      const signed = auth[4]!.split(';');
      const headers: Record<string, string> = {};
      for (const name of signed)
        if (!['host', 'x-amz-date', 'x-amz-content-sha256'].includes(name))
          headers[name] = String(req.headers[name] ?? '');
      const expected = signV4({
        method: req.method ?? 'GET',
        url,
        headers,
        payloadHash: String(req.headers['x-amz-content-sha256']),
        region: o.region,
        accessKeyId: o.accessKeyId,
        secretAccessKey: o.secretAccessKey,
        amzDate: String(req.headers['x-amz-date']),
      });
      if (expected.authorization !== req.headers.authorization) return fail(403, 'SignatureDoesNotMatch');
      const [, bucket, ...rest] = url.pathname.split('/');
      if (bucket !== o.bucket) return fail(404, 'NoSuchBucket');
      const key = rest.map((s) => decodeURIComponent(s)).join('/');
      if (req.method === 'GET' && key === '' && url.searchParams.get('list-type') === '2') {
        if (removalsDown) return fail(removalsDown, 'InjectedFailure');
        const prefix = url.searchParams.get('prefix') ?? '';
        const after = url.searchParams.get('continuation-token') ?? '';
        // Pages of 2 keys unless asked otherwise (S3: 1000), so that every listing pages.
        const max = Number(url.searchParams.get('max-keys') ?? 2);
        const matching = [...objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort();
        const page = matching.slice(0, max);
        const truncated = matching.length > page.length;
        const xml = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
        res.writeHead(200, { 'content-type': 'application/xml' });
        return void res.end(
          `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${o.bucket}</Name><Prefix>${xml(prefix)}</Prefix>` +
            `<KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>` +
            page
              .map((k) => `<Contents><Key>${xml(k)}</Key><Size>${objects.get(k)!.body.length}</Size></Contents>`)
              .join('') +
            (truncated ? `<NextContinuationToken>${xml(page[page.length - 1]!)}</NextContinuationToken>` : '') +
            '</ListBucketResult>',
        );
      }
      switch (req.method ?? '') {
        case 'PUT': {
          const failure = failing.get(++puts);
          if (failure) return fail(failure, 'InjectedFailure');
          if (createHash('sha256').update(body).digest('hex') !== req.headers['x-amz-content-sha256'])
            return fail(400, 'XAmzContentSHA256Mismatch');
          objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'application/octet-stream') });
          res.writeHead(200, { etag: '"x"' }).end();
          return;
        }
        case 'GET':
        case 'HEAD': {
          const object = objects.get(key);
          if (!object) return fail(404, 'NoSuchKey');
          const size = object.body.length;
          const m = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ''));
          if (m && (m[1] || m[2])) {
            const start = m[1] ? Number(m[1]) : Math.max(0, size - Number(m[2]));
            const end = m[1] && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
            if (start >= size || start > end)
              return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
            res.writeHead(206, {
              'content-length': end - start + 1,
              'content-range': `bytes ${start}-${end}/${size}`,
              'content-type': object.contentType,
            });
            return void res.end(req.method === 'HEAD' ? undefined : object.body.subarray(start, end + 1));
          }
          res.writeHead(200, { 'content-length': size, 'content-type': object.contentType });
          return void res.end(req.method === 'HEAD' ? undefined : object.body);
        }
        case 'DELETE': {
          if (removalsDown) return fail(removalsDown, 'InjectedFailure');
          objects.delete(key);
          return void res.writeHead(204).end();
        }
        default:
          return fail(405, 'MethodNotAllowed');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    objects,
    rejected,
    failPut: (n, status = 503) => void failing.set(puts + n, status),
    failRemovals: (status = 503) => void (removalsDown = status),
    restore: () => void (removalsDown = null),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
