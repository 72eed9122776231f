import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ContractViolation, DomainError, HTTP_STATUS_OF, type ErrorCode } from '@switchboard/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { throwError, type Observable } from 'rxjs';
import { CORRELATION_HEADER, acceptCorrelationId, currentCorrelationId } from './correlation.js';
import { drainRequestBody } from './body-drain.js';

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'ValidationFailed',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  408: 'RequestTimeout',
  413: 'PayloadTooLarge',
  414: 'UriTooLong',
  415: 'UnsupportedMediaType',
  431: 'RequestHeaderFieldsTooLarge',
  503: 'Unavailable',
  504: 'Timeout',
};

const logger = new Logger('Errors');

/** Socket errors of a dependency that cannot be reached (PostgreSQL, Redis). */
const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/**
 * PostgreSQL's SQLSTATEs of a server that is unreachable, going away or full: class 08 (connection
 * exception), 57P01-57P03 (administrator or crash shutdown, not accepting connections yet), 53300
 * (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** What node-postgres, its pool and ioredis throw, without a code, when the connection is gone. */
const CONNECTION_GONE = new RegExp(
  `^(${[
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error',
    'Connection is closed',
    "Stream isn't writeable",
  ].join('|')})`,
);

/** A socket error named in a message whose code was lost on the way (`connect ECONNREFUSED 127.0.0.1:6379`). */
const ERRNO_IN_MESSAGE = /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)\b/;

/**
 * True when `exception` says a dependency is down rather than that the request or the code is
 * wrong: looked for in the error, the driver error TypeORM wraps (`driverError`) and its `cause`.
 */
export function isDependencyDown(exception: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = exception; e !== null && typeof e === 'object' && !seen.has(e);) {
    seen.add(e);
    const { name, code, message, driverError, cause } = e as {
      name?: unknown;
      code?: unknown;
      message?: unknown;
      driverError?: unknown;
      cause?: unknown;
    };
    // ioredis gave up on a command while reconnecting.
    if (name === 'MaxRetriesPerRequestError') return true;
    // TypeORM released the query runner when its connection failed (a PostgreSQL crash in the
    // middle of a transaction): the transaction's next statement fails with one of these instead.
    if (name === 'QueryRunnerAlreadyReleasedError' || name === 'QueryRunnerProviderAlreadyReleasedError') return true;
    if (typeof code === 'string' && (UNREACHABLE_ERRNO.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (typeof message === 'string' && (CONNECTION_GONE.test(message) || ERRNO_IN_MESSAGE.test(message))) return true;
    e = driverError ?? cause;
  }
  return false;
}

/**
 * Fastify's own refusals, raised before a route runs (content-type parsing, routing), as the
 * interface's errors. Codes not listed keep their status (see toDomainError).
 */
const FRAMEWORK_ERRORS: Record<string, () => DomainError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new DomainError('PayloadTooLarge', 'The request body is larger than allowed (1 MiB).'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new DomainError('UnsupportedMediaType', 'The request body must be application/json (UTF-8).'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new DomainError('ValidationFailed', 'The request body does not match its Content-Length.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new DomainError('ValidationFailed', 'The request body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new DomainError('ValidationFailed', 'The request body is empty.'),
  FST_ERR_BAD_URL: () =>
    new DomainError(
      'ValidationFailed',
      'The request path is not a valid URL: a percent-encoding is malformed or not UTF-8.',
    ),
  FST_ERR_MAX_PARAM_LENGTH: () =>
    new DomainError('UriTooLong', 'A path segment of the request is longer than allowed (512 characters).'),
};

/** Fastify's error, thrown as is or wrapped by Nest's exception layer in an HttpException (`cause`). */
function frameworkErrorOf(exception: unknown): DomainError | undefined {
  for (const candidate of [exception, (exception as { cause?: unknown } | null)?.cause]) {
    const code = (candidate as { code?: unknown } | null | undefined)?.code;
    if (typeof code === 'string' && Object.hasOwn(FRAMEWORK_ERRORS, code)) return FRAMEWORK_ERRORS[code]!();
  }
  return undefined;
}

/**
 * Normalizes anything thrown into a DomainError. A dependency that is down (PostgreSQL or Redis
 * unreachable, restarting, out of connections) is `Unavailable` (503: try again). Other unexpected
 * errors are logged here (with their stack, server side only) and become an opaque `Internal` error:
 * no stack, no SQL, reaches a client.
 */
export function toDomainError(exception: unknown): DomainError {
  if (exception instanceof DomainError) return exception;
  if (exception instanceof ContractViolation)
    return new DomainError('ValidationFailed', 'The request body is invalid.', exception.errors);
  const framework = frameworkErrorOf(exception);
  if (framework) return framework;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = CODE_OF_STATUS[status] ?? (status >= 500 ? 'Internal' : 'ValidationFailed');
    const message =
      status === 404 ? 'No such resource.' : status === 400 ? 'The request is malformed.' : exception.message;
    return new DomainError(code, message);
  }
  const status = (exception as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_OF_STATUS[status] ?? 'ValidationFailed';
    const message =
      code === 'PayloadTooLarge' ? 'The request body is larger than allowed.' : 'The request is malformed.';
    return new DomainError(code, message);
  }
  if (isDependencyDown(exception)) {
    logger.warn(`a dependency is unavailable: ${exception instanceof Error ? exception.message : String(exception)}`);
    return new DomainError('Unavailable', 'A service this request needs is unavailable; try again shortly.');
  }
  logger.error(exception instanceof Error ? exception : String(exception));
  return new DomainError('Internal', 'An internal error occurred.');
}

/** What an error renderer knows of the request: it may run before routing, even before Fastify has a request. */
export interface ErrorContext {
  /** The request path without its query (`instance` of a problem). */
  path: string;
  correlationId: string;
}

/** One error response in the interface's own format. */
export interface ErrorResponse {
  status: number;
  contentType: string;
  headers?: Record<string, string>;
  body: unknown;
}

/**
 * Renders one error in the interface's own format (Problem on A, OData error on B). A pure function
 * of the error, so that errors raised before Fastify has a request (`clientError`) look the same.
 */
export type HttpErrorRenderer = (error: DomainError, context: ErrorContext) => ErrorResponse;

/**
 * One filter for both transports of a service: typed WireError over NATS, the interface's own
 * body over HTTP.
 */
@Catch()
export class TransportErrorFilter implements ExceptionFilter {
  constructor(private readonly renderHttp: HttpErrorRenderer) {}

  catch(exception: unknown, host: ArgumentsHost): Observable<never> | void {
    const error = toDomainError(exception);
    if (host.getType() === 'rpc') return throwError(() => error.toWire());
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    sendError(this.renderHttp, request.is404 ? (methodNotAllowed(request, reply) ?? error) : error, request, reply);
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A path no route takes with this method but some with another: 405 with `Allow` (RFC 9110 15.5.6). */
function methodNotAllowed(request: FastifyRequest, reply: FastifyReply): DomainError | undefined {
  const url = request.url.split('?')[0] ?? '/';
  const allowed = METHODS.filter((method) => request.server.findRoute({ method, url }) !== null);
  // The router refused this very method for this path (an empty segment): no route, not a method.
  if (allowed.length === 0 || allowed.includes(request.method as (typeof METHODS)[number])) return undefined;
  void reply.header('allow', allowed.join(', '));
  return new DomainError(
    'MethodNotAllowed',
    `${request.method} is not allowed on this path; it takes ${allowed.join(', ')}.`,
  );
}

/** A body is announced and not all read (`complete` is false for any request until its parse ends). */
function hasUnreadBody(raw: FastifyRequest['raw']): boolean {
  return (
    !raw.complete && (raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0)
  );
}

/**
 * Sends `error` on a Fastify reply, then reads and discards what is left of the request body (see drainRequestBody).
 */
export function sendError(
  render: HttpErrorRenderer,
  error: DomainError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const correlationId =
    String(reply.getHeader(CORRELATION_HEADER) ?? '') ||
    currentCorrelationId() ||
    acceptCorrelationId(request.headers[CORRELATION_HEADER] as string | undefined);
  const answer = render(error, { path: request.url.split('?')[0] ?? '/', correlationId });
  // A dependency that is down is worth another try shortly (RFC 9110 Retry-After, in seconds).
  if (error.code === 'Unavailable') void reply.header('retry-after', '1');
  for (const [name, value] of Object.entries(answer.headers ?? {})) void reply.header(name, value);
  void reply.header(CORRELATION_HEADER, correlationId);
  if (hasUnreadBody(request.raw)) {
    // Fastify asks to close after a refused body; closing with the client still sending resets
    // the connection and the client loses this answer. The body is drained instead (bounded).
    void reply.removeHeader('connection');
    drainRequestBody(request.raw);
  }
  void reply.status(answer.status).header('content-type', answer.contentType).send(answer.body);
}

export function statusOf(error: DomainError): number {
  return HTTP_STATUS_OF[error.code];
}

/** Error body of services without a public HTTP API (only health, readiness and metrics). */
export const renderPlainError: HttpErrorRenderer = (error) => ({
  status: statusOf(error),
  contentType: 'application/json; charset=utf-8',
  body: { code: error.code, message: error.message },
});
