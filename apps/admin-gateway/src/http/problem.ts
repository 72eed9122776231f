import { DomainError } from '@switchboard/contracts';
import { statusOf, type HttpErrorRenderer } from '@switchboard/service-kit';

/** The problem title: the reason phrase of the status (HTTP_STATUS_OF gives the status of each code). */
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export const PROBLEM_TYPE_BASE = 'https://switchboard.dev/problems/';

/** RFC 9457 problem details, plus `code`, `correlationId` and, for validation, `errors` naming each field. */
export const renderProblem: HttpErrorRenderer = (error, { path, correlationId }) => {
  const status = statusOf(error);
  // A downstream service's internal failure is described by that service's logs, never to the caller.
  if (error.code === 'Internal') error = new DomainError('Internal', 'An internal error occurred.');
  const body: Record<string, unknown> = {
    type: `${PROBLEM_TYPE_BASE}${error.code.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}`,
    title: TITLES[status] ?? 'Error',
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
