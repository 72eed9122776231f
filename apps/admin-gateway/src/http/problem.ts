import { DomainError, type ErrorCode } from '@switchboard/contracts';
import { currentCorrelationId, statusOf, type HttpErrorRenderer } from '@switchboard/service-kit';

const TITLES: Record<ErrorCode, string> = {
  ValidationFailed: 'Bad Request',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'Not Found',
  Conflict: 'Conflict',
  PayloadTooLarge: 'Payload Too Large',
  Internal: 'Internal Server Error',
  Unavailable: 'Service Unavailable',
  Timeout: 'Gateway Timeout',
};

export const PROBLEM_TYPE_BASE = 'https://switchboard.dev/problems/';

/** RFC 9457 problem details, plus `code`, `correlationId` and, for validation, `errors` naming each field. */
export const renderProblem: HttpErrorRenderer = (error, request, reply) => {
  const status = statusOf(error);
  // A downstream service's internal failure is described by that service's logs, never to the caller.
  if (error.code === 'Internal') error = new DomainError('Internal', 'An internal error occurred.');
  const body: Record<string, unknown> = {
    type: `${PROBLEM_TYPE_BASE}${error.code.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}`,
    title: TITLES[error.code],
    status,
    detail: error.details.length ? `${error.message} ${error.details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ')}` : error.message,
    instance: request.url.split('?')[0],
    code: error.code,
    correlationId: currentCorrelationId() ?? String(reply.getHeader('x-correlation-id') ?? ''),
  };
  if (error.details.length) body.errors = error.details;
  if (status === 401) void reply.header('www-authenticate', 'ApiKey header="X-API-Key", Bearer');
  void reply.status(status).header('content-type', 'application/problem+json').send(body);
};
