import { statusOf, type HttpErrorRenderer } from '@switchboard/service-kit';
import { ODataQueryError } from '../common/odata-query.js';

/**
 * Interface B error body: `{ "error": { code, message, target, details } }`. The code is the
 * failure kind (query errors keep the engine's own code: `QuerySyntaxError`, `QueryLimitExceeded`,
 * `UnknownProperty`); `target` names the offending option or field when there is one.
 */
export const renderODataError: HttpErrorRenderer = (error) => {
  const code = error instanceof ODataQueryError ? error.odataCode : error.code;
  const details = error.details.map((d) => ({ code, message: d.message, target: d.field ?? null }));
  const target = error.target ?? (error.details.length === 1 ? (error.details[0]?.field ?? null) : null);
  return {
    status: statusOf(error),
    contentType: 'application/json; charset=utf-8',
    body: { error: { code, message: error.message, target, details } },
  };
};
