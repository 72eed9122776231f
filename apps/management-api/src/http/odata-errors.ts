import { statusOf, type HttpErrorRenderer } from '@switchboard/service-kit';
import { ODataQueryError } from '../common/odata-query.js';

/**
 * Interface B error body: `{ "error": { code, message, target, details } }`. The code is the
 * failure kind (query errors keep the engine's own code: `QuerySyntaxError`, `QueryLimitExceeded`,
 * `UnknownProperty`); `target` names the offending option or field when there is one.
 */
export const renderODataError: HttpErrorRenderer = (error, _request, reply) => {
  const code = error instanceof ODataQueryError ? error.odataCode : error.code;
  const details = error.details.map((d) => ({ code, message: d.message, target: d.field ?? null }));
  const target = error.target ?? (error.details.length === 1 ? (error.details[0]?.field ?? null) : null);
  void reply
    .status(statusOf(error))
    .header('content-type', 'application/json; charset=utf-8')
    .send({ error: { code, message: error.message, target, details } });
};
