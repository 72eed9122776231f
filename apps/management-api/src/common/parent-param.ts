import { DomainError } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';

/** A plain (non-`$`) query parameter given at most once; undefined when absent. */
export function singleParam(query: QueryParams | undefined, name: string): string | undefined {
  const value = query?.[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new DomainError(
      'ValidationFailed',
      `${name} is given more than once.`,
      [{ field: name, message: 'is given more than once' }],
      name,
    );
  return value;
}
