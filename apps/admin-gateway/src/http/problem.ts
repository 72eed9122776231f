import { DomainError, type ErrorCode } from '@switchboard/contracts';
import { statusOf, type HttpErrorRenderer } from '@switchboard/service-kit';

const TITLES: Record<ErrorCode, string> = {
  ValidationFailed: 'Bad Request',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'Not Found',
  Conflict: 'Conflict',
  PayloadTooLarge: 'Payload Too Large',
  MethodNotAllowed: 'Method Not Allowed',
  UnsupportedMediaType: 'Unsupported Media Type',
  UriTooLong: 'URI Too Long',
  RequestHeaderFieldsTooLarge: 'Request Header Fields Too Large',
  RequestTimeout: 'Request Timeout',
  Internal: 'Internal Server Error',
  Unavailable: 'Service Unavailable',
  Timeout: 'Gateway Timeout',
};

export const PROBLEM_TYPE_BASE = 'https://switchboard.dev/problems/';

/** RFC 9457 problem details, plus `code`, `correlationId` and, for validation, `errors` naming each field. */
export const renderProblem: HttpErrorRenderer = (error, { path, correlationId }) => {
  const status = statusOf(error);
  // A downstream service's internal failure is described by that service's logs, never to the caller.
  if (error.code === 'Internal') error = new DomainError('Internal', 'An internal error occurred.');
  const body: Record<string, unknown> = {
    type: `${PROBLEM_TYPE_BASE}${error.code.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}`,
    title: TITLES[error.code],
    status,
    detail: error.details.length
      ? `${error.message} ${error.details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ')}`
      : error.message,
    instance: path,
    code: error.code,
    correlationId,
  };
  if (error.details.length) body.errors = error.details;
  const headers: Record<string, string> =
    status === 401 ? { 'www-authenticate': 'ApiKey header="X-API-Key", Bearer' } : {};
  return { status, contentType: 'application/problem+json', headers, body };
};
