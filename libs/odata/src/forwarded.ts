/**
 * The answering side of interface B reads that management-api forwards over NATS: the answering
 * service binds the names to its own entity model, so every forwarded read refuses the same names
 * the same way (README, "Forwarded reads").
 */
import { DomainError } from '@switchboard/contracts';
import type { ODataQuery } from './ast.js';
import { ODataError } from './errors.js';
import type { EntityModel } from './model.js';
import { parseQueryOptions, type QueryParams } from './options.js';

/** The options a forwarded single-record read takes. */
export const FORWARDED_SINGLE_READ_OPTIONS = ['$select', '$expand'] as const;

/**
 * An OData refusal as it crosses NATS: `ValidationFailed` naming the option, the OData code first in the detail
 * message.
 */
export function forwardedQueryError(e: ODataError): DomainError {
  return new DomainError(
    'ValidationFailed',
    e.message,
    [{ field: e.target, message: `${e.code}: ${e.message}` }],
    e.target,
  );
}

/** Runs `fn`, an ODataError it throws becoming `forwardedQueryError`. */
export function withForwardedQueryErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ODataError) throw forwardedQueryError(e);
    throw e;
  }
}

/**
 * Binds forwarded options (`ForwardedQueryOptions`: `$` names, values as the client wrote them) to
 * `model`. `single`: a single-record read, which takes `FORWARDED_SINGLE_READ_OPTIONS` only.
 */
export function parseForwardedQuery(
  options: Readonly<Record<string, unknown>> | undefined,
  model: EntityModel,
  single = false,
): ODataQuery {
  const params: QueryParams = {};
  for (const [key, value] of Object.entries(options ?? {})) {
    if (typeof value === 'string') params[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') params[key] = String(value);
  }
  if (single) {
    for (const key of Object.keys(params)) {
      if (!(FORWARDED_SINGLE_READ_OPTIONS as readonly string[]).includes(key.toLowerCase())) {
        throw new DomainError(
          'ValidationFailed',
          `${key} is not supported on a single-record read.`,
          [
            {
              field: key,
              message: `QuerySyntaxError: ${key} is not supported on a single-record read; supported: ${FORWARDED_SINGLE_READ_OPTIONS.join(', ')}.`,
            },
          ],
          key,
        );
      }
    }
  }
  return withForwardedQueryErrors(() => parseQueryOptions(params, model));
}
