/**
 * Sends the hostile requests of every operation of one interface, and the framing attacks that
 * Node and Fastify answer before any route runs (16 KB URL, headers over the limit, bodies over
 * 1 MiB), and checks every answer against the interface's error contract.
 */
import {
  hostileRequestsFor,
  operationsOf,
  toleratedRequestsFor,
  type HostileRequest,
  type OpenApiDocument,
  type Operation,
} from './corpus.js';
import type { ErrorContract, Tally } from './tally.js';
import { pool, send, sendRaw } from './wire.js';

export interface Interface {
  name: string;
  baseUrl: string;
  doc: OpenApiDocument;
  contract: ErrorContract;
  apiKey: string;
  ids: (op: Operation) => Record<string, string>;
}

const CONCURRENCY = 8;
/** A request line longer than this goes on a connection of its own: Node closes the connection after a 431. */
const LONG_HEAD = 8 * 1024;

async function sendChecked(
  face: Interface,
  request: HostileRequest,
  tally: Tally,
  accept?: (status: number) => boolean,
): Promise<number> {
  const what = `${request.method} ${request.path.slice(0, 140)}`;
  const headers = { 'x-api-key': face.apiKey };
  const answer =
    request.path.length > LONG_HEAD
      ? await sendRaw(
          face.baseUrl,
          rawHead(request.method, request.path, {
            ...headers,
            ...request.headers,
            'content-length': String(request.body ? Buffer.byteLength(request.body) : 0),
          }),
        )
      : await send(face.baseUrl, request, headers).catch((error: Error) => ({
          status: 0,
          contentType: '',
          correlationId: undefined,
          text: error.message,
          body: undefined,
        }));
  if (accept?.(answer.status)) tally.count(String(answer.status));
  else tally.check(face.contract, `${face.name} ${request.category}`, what, answer);
  return answer.status;
}

export function rawHead(method: string, path: string, headers: Record<string, string>): string {
  return (
    [
      `${method} ${path} HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: close',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ].join('\r\n') + '\r\n'
  );
}

/**
 * Every hostile request of every operation; all must be refused. Returns the categories each operation (`METHOD
 * template`) was attacked with.
 */
export async function attackOperations(face: Interface, tally: Tally): Promise<Map<string, Set<string>>> {
  const operations = operationsOf(face.doc);
  const attacked = new Map<string, Set<string>>(
    operations.map((op) => [`${op.method} ${op.template}`, new Set<string>()]),
  );
  const requests = operations.flatMap((op) => {
    const own = hostileRequestsFor(face.doc, op, face.ids(op), '');
    // A body where none is expected, on a bodiless write, with an id that exists nowhere: refused the same way.
    if (!op.bodySchema && op.method !== 'GET' && op.pathParams.length > 0) {
      own.push({
        category: 'empty-json-body',
        method: op.method,
        path: op.template.replace(/\{[^}]+\}/g, 'no-such-id-%00'),
        headers: { 'content-type': 'application/json' },
        body: '',
      });
    }
    for (const request of own) attacked.get(`${op.method} ${op.template}`)!.add(request.category.split(':')[0]!);
    return own;
  });
  await pool(requests, CONCURRENCY, async (request) => void (await sendChecked(face, request, tally)));
  return attacked;
}

/** The categories an operation must have been attacked with, from its OpenAPI description. */
export function expectedCategories(op: Operation): string[] {
  return [
    ...(op.pathParams.length > 0 ? ['path-id'] : []),
    ...(op.bodySchema ? ['body'] : []),
    ...(!op.bodySchema && op.method !== 'GET' && op.pathParams.length > 0 ? ['empty-json-body'] : []),
    ...(op.integerQuery.length > 0 ? ['query-integer'] : []),
    ...(op.stringQuery.length > 0 ? ['query-string'] : []),
    ...(op.odata ? ['odata'] : []),
  ].sort();
}

/** Overlong and non-UTF-8 strings: refused, or taken where the field has no limit; never a 5xx. */
export async function attackToleratedBodies(face: Interface, tally: Tally): Promise<void> {
  const requests = operationsOf(face.doc).flatMap((op) => toleratedRequestsFor(face.doc, op, face.ids(op), ''));
  await pool(
    requests,
    CONCURRENCY,
    async (request) => void (await sendChecked(face, request, tally, (status) => status >= 200 && status < 300)),
  );
}

/**
 * Every list of the interface read a full page (`$top=1000`), 4 times over, 16 at a time: what
 * the tolerated writes stored is read back whole, the way a customer's dashboard would.
 */
export async function readEveryList(face: Interface, tally: Tally): Promise<void> {
  const lists = operationsOf(face.doc).filter((op) => op.method === 'GET' && op.pathParams.length === 0 && op.odata);
  const reads = lists.flatMap((op) =>
    Array.from({ length: 4 }, () => ({
      category: 'list-read',
      method: 'GET',
      path: `${op.template}?$top=1000`,
      headers: {},
    })),
  );
  await pool(reads, 16, async (request) => void (await sendChecked(face, request, tally, (status) => status === 200)));
}

/**
 * Per operation: a 16 KB URL (431) and a declared body over 1 MiB (413, read before the reset);
 * per interface: headers over the limit (431) and a chunked body over 1 MiB (413).
 */
export async function attackFraming(face: Interface, tally: Tally): Promise<void> {
  const operations = operationsOf(face.doc);
  const key = { 'x-api-key': face.apiKey };
  const oversized = 2 * 1024 * 1024;
  const checks: Array<[string, () => Promise<import('./wire.js').HostileAnswer>]> = [];
  for (const op of operations) {
    const path = op.template.replace(/\{[^}]+\}/g, 'x');
    checks.push([
      `url-16k ${op.method} ${op.template}`,
      () => sendRaw(face.baseUrl, rawHead(op.method, `${path}?pad=${'a'.repeat(16 * 1024)}`, key)),
    ]);
    if (op.bodySchema) {
      checks.push([
        `body-over-1MiB ${op.method} ${op.template}`,
        () =>
          sendRaw(
            face.baseUrl,
            rawHead(op.method, path, {
              ...key,
              'content-type': 'application/json',
              'content-length': String(oversized),
            }),
            oversized,
          ),
      ]);
    }
  }
  const first = operations.find((op) => op.bodySchema)!;
  const firstPath = first.template.replace(/\{[^}]+\}/g, 'x');
  checks.push([
    `headers-over-limit ${first.template}`,
    () => sendRaw(face.baseUrl, rawHead('GET', firstPath, { ...key, 'x-pad': 'a'.repeat(20 * 1024) })),
  ]);
  checks.push([
    `many-headers ${first.template}`,
    () =>
      sendRaw(
        face.baseUrl,
        rawHead('GET', firstPath, {
          ...key,
          ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x-h${i}`, 'aaaaaaaa'])),
        }),
      ),
  ]);
  checks.push([
    `chunked-body-over-1MiB ${first.method} ${first.template}`,
    () => sendChunked(face, first.method, firstPath, oversized),
  ]);
  await pool(checks, 4, async ([what, run]) =>
    tally.check(face.contract, `${face.name} ${what.split(' ')[0]}`, what, await run()),
  );
}

/** A chunked body of `bytes` bytes, as one JSON string, until the server answers. */
function sendChunked(face: Interface, method: string, path: string, bytes: number) {
  const chunk = 'a'.repeat(64 * 1024);
  const head = rawHead(method, path, {
    'x-api-key': face.apiKey,
    'content-type': 'application/json',
    'transfer-encoding': 'chunked',
  });
  // sendRaw ends what it is given with CRLF: the last chunk's own CRLF.
  const chunks = Array.from(
    { length: Math.ceil(bytes / chunk.length) },
    () => `${chunk.length.toString(16)}\r\n${chunk}`,
  ).join('\r\n');
  return sendRaw(face.baseUrl, `${head}\r\n1\r\n"\r\n${chunks}`, 0);
}
