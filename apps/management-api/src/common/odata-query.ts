import { DomainError, type ODataQueryErrorCode } from '@switchboard/contracts';
import {
  ODataError,
  parseQueryOptions,
  parseQueryOptionsSyntax,
  type EntityModel,
  type ODataQuery,
  type QueryParams,
} from '@switchboard/odata';

/**
 * An OData query option the engine refused. Carries the OData error code of the contract
 * (`QuerySyntaxError`, `QueryLimitExceeded`, `UnknownProperty`, `ValidationFailed`) beside the
 * transport code (`ValidationFailed`, a 400), and the offending option as `target`.
 */
export class ODataQueryError extends DomainError {
  constructor(
    readonly odataCode: ODataQueryErrorCode,
    message: string,
    target: string,
  ) {
    super('ValidationFailed', message, [], target);
  }
}

export function toQueryError(error: ODataError): ODataQueryError {
  return new ODataQueryError(error.code, error.message, error.target);
}

function translate<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ODataError) throw toQueryError(e);
    throw e;
  }
}

/** The `$` options of a list request, validated against the entity model. */
export function parseListQuery(params: QueryParams | undefined, model: EntityModel): ODataQuery {
  return translate(() => parseQueryOptions(params ?? {}, model));
}

const SINGLE_RECORD_OPTIONS = new Set(['$select', '$expand']);

/** Single-record reads take only `$select` and `$expand`. */
export function parseSingleQuery(params: QueryParams | undefined, model: EntityModel): ODataQuery {
  rejectOptions(params, SINGLE_RECORD_OPTIONS, 'a single-record read');
  return translate(() => parseQueryOptions(params ?? {}, model));
}

/**
 * Checks the grammar and limits of options a downstream service will apply (its model is its own):
 * syntax errors and exceeded limits are answered here, with their own codes.
 */
export function checkForwardedQuery(
  params: QueryParams | undefined,
  allowed: readonly string[],
  what: string,
): { options: Record<string, string>; query: ODataQuery } {
  rejectOptions(params, new Set(allowed), what);
  const query = translate(() => parseQueryOptionsSyntax(params ?? {}));
  const options: Record<string, string> = {};
  for (const [key, value] of Object.entries(params ?? {})) {
    if (key.startsWith('$') && typeof value === 'string') options[key.toLowerCase()] = value;
  }
  return { options, query };
}

function rejectOptions(params: QueryParams | undefined, allowed: ReadonlySet<string>, what: string): void {
  for (const key of Object.keys(params ?? {})) {
    if (key.startsWith('$') && !allowed.has(key.toLowerCase())) {
      throw new ODataQueryError(
        'QuerySyntaxError',
        `${key.slice(0, 64)} is not supported on ${what}; supported: ${[...allowed].join(', ')}.`,
        key.slice(0, 64),
      );
    }
  }
}

/** OpenAPI descriptions of the query options. */
export const LIST_QUERY_DOC = [
  { name: '$filter', description: 'OData 4.0 filter expression (at most 100 nodes).', schema: { type: 'string' } },
  { name: '$orderby', description: 'Sort items, `asc` or `desc` (at most 5).', schema: { type: 'string' } },
  {
    name: '$top',
    description: 'Page size (0 to 1000; default 100).',
    schema: { type: 'integer', minimum: 0, maximum: 1000 },
  },
  { name: '$skip', description: 'Items skipped from the start.', schema: { type: 'integer', minimum: 0 } },
  {
    name: '$count',
    description: 'true: the answer carries `@odata.count`, the number of matching items.',
    schema: { type: 'boolean' },
  },
  { name: '$select', description: 'Comma-separated properties to return.', schema: { type: 'string' } },
  {
    name: '$expand',
    description: 'Navigation properties to return inline, with nested options (depth at most 2).',
    schema: { type: 'string' },
  },
  {
    name: 'api-version',
    description: 'API version; only `1.0` is supported.',
    schema: { type: 'string', enum: ['1.0'] },
  },
];

export const SINGLE_QUERY_DOC = LIST_QUERY_DOC.filter((q) => ['$select', '$expand', 'api-version'].includes(q.name));
export const API_VERSION_DOC = LIST_QUERY_DOC.filter((q) => q.name === 'api-version');
