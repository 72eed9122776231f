import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ContractViolation, DomainError, HTTP_STATUS_OF, type ErrorCode } from '@switchboard/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { throwError, type Observable } from 'rxjs';

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'ValidationFailed',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'NotFound',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'ValidationFailed',
  503: 'Unavailable',
  504: 'Timeout',
};

const logger = new Logger('Errors');

/**
 * Normalizes anything thrown into a DomainError. Unexpected errors are logged here (with their
 * stack, server side only) and become an opaque `Internal` error: no stack, no SQL, reaches a client.
 */
export function toDomainError(exception: unknown): DomainError {
  if (exception instanceof DomainError) return exception;
  if (exception instanceof ContractViolation) return new DomainError('ValidationFailed', 'The request body is invalid.', exception.errors);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = CODE_OF_STATUS[status] ?? (status >= 500 ? 'Internal' : 'ValidationFailed');
    const message = status === 404 ? 'No such resource.' : status === 400 ? 'The request is malformed.' : exception.message;
    return new DomainError(code, message);
  }
  const status = (exception as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_OF_STATUS[status] ?? 'ValidationFailed';
    const message = code === 'PayloadTooLarge' ? 'The request body is larger than allowed.' : 'The request is malformed.';
    return new DomainError(code, message);
  }
  logger.error(exception instanceof Error ? exception : String(exception));
  return new DomainError('Internal', 'An internal error occurred.');
}

/** Writes one error as an HTTP response in the interface's own error format. */
export type HttpErrorRenderer = (error: DomainError, request: FastifyRequest, reply: FastifyReply) => void;

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
    this.renderHttp(error, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}

export function statusOf(error: DomainError): number {
  return HTTP_STATUS_OF[error.code];
}

/** Error body of services without a public HTTP API (only health, readiness and metrics). */
export const renderPlainError: HttpErrorRenderer = (error, _request, reply) => {
  void reply.status(statusOf(error)).send({ code: error.code, message: error.message });
};
