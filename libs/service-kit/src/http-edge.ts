import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { DomainError } from '@switchboard/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { drainSocket } from './body-drain.js';
import { sendError, toDomainError, type HttpErrorRenderer } from './errors.js';

/**
 * The HTTP framework's own refusals in the interface's error format: request bodies (JSON in UTF-8
 * only), routing errors (`frameworkErrors`: bad percent-encoding, over-long path segment) and what
 * Node refuses before Fastify sees a request (`clientError`: headers over maxHeaderSize, bad HTTP).
 */

/** The framework's limits as published in each interface's OpenAPI description (and README.md). */
export const HTTP_EDGE_RULES =
  'Limits of the HTTP server, answered in the error body above with X-Correlation-Id like every response: ' +
  'a malformed percent-encoding in the path is 400; a path segment (an id) over 512 characters is 414 URI Too Long; ' +
  'a request line and headers over 16 KiB in all (so a URL near 16 KiB too) are 431; a request that is not HTTP/1.1 is 400. ' +
  'Request bodies are JSON in UTF-8: any other Content-Type or charset is 415, bytes that are not UTF-8 or not JSON are 400, ' +
  'a JSON value other than an object (`null` included) where an object is expected is 400, and `Content-Type: application/json` ' +
  'with an empty body is no body. A body over 1 MiB is 413; the server reads and discards up to 16 MiB (10 s) of the rest before ' +
  'it closes, so that the client reads the 413 rather than a connection reset. An unknown path is 404; a method the path does not take is 405 with an `Allow` header. ' +
  'A request arriving while the service shuts down is 503 with `Retry-After` and `Connection: close`.';

/** Request bodies are JSON objects: `application/json`, UTF-8. Anything else is 415. */
export function installJsonBodyParser(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.removeAllContentTypeParsers();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const buffer = body as Buffer;
    if (!isUtf8Charset(request.headers['content-type']))
      return done(
        new DomainError(
          'UnsupportedMediaType',
          'The request body must be application/json in UTF-8 (no other charset).',
        ),
        undefined,
      );
    // `Content-Type: application/json` with no body (a DELETE sent by a generic client): no body.
    if (buffer.length === 0) return done(null, undefined);
    if (!isUtf8(buffer))
      return done(new DomainError('ValidationFailed', 'The request body is not valid UTF-8.'), undefined);
    void parseJson(request, buffer.toString('utf8'), done);
  });
}

function isUtf8Charset(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/** Fastify's `frameworkErrors`: raised while routing, before any hook (so the correlation id is set here). */
export function frameworkErrorHandler(render: HttpErrorRenderer) {
  return (error: Error, request: FastifyRequest<never, never>, reply: FastifyReply<never, never>): void => {
    sendError(render, toDomainError(error), request as unknown as FastifyRequest, reply as unknown as FastifyReply);
  };
}

const answeredSockets = new WeakSet<Socket>();

/**
 * Node's `clientError`: the request could not be parsed (headers over maxHeaderSize: 431; a
 * header timeout: 408; anything else: 400). Answered on the raw socket in the interface's format,
 * then the rest the client sends is read and discarded, so that it reads the answer before the close.
 */
export function clientErrorHandler(render: HttpErrorRenderer) {
  return (cause: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (cause.code === 'ECONNRESET' || socket.destroyed || answeredSockets.has(socket)) return;
    answeredSockets.add(socket);
    const answer = () => answerOnSocket(render, cause, socket);
    // A pipelined request before the broken one is answered first, or the client would take ours for its.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight && !inFlight.writableFinished) inFlight.once('finish', answer);
    else answer();
  };
}

function answerOnSocket(
  render: HttpErrorRenderer,
  cause: Error & { code?: string; rawPacket?: unknown },
  socket: Socket,
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const correlationId = randomUUID();
  const answer = render(clientErrorOf(cause.code), { path: pathOf(cause.rawPacket), correlationId });
  const body = JSON.stringify(answer.body);
  const headers = {
    ...answer.headers,
    'content-type': answer.contentType,
    'content-length': String(Buffer.byteLength(body)),
    'x-correlation-id': correlationId,
    connection: 'close',
  };
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  drainSocket(socket);
}

function clientErrorOf(code: string | undefined): DomainError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new DomainError(
      'RequestHeaderFieldsTooLarge',
      'The request line and headers are larger than allowed (16 KiB in all).',
    );
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new DomainError('RequestTimeout', 'The request was not received in time.');
  return new DomainError('ValidationFailed', 'The request is not valid HTTP/1.1.');
}

/** The path of the request line in what Node had received, when it is short enough to repeat. */
function pathOf(rawPacket: unknown): string {
  const start = Buffer.isBuffer(rawPacket) ? rawPacket.subarray(0, 1100).toString('latin1') : '';
  const target = /^[A-Z]+ (\/[^ ?\r\n]{0,1023})[ ?]/.exec(start)?.[1];
  return target ?? '';
}
