import type { Static, TObject } from '@sinclair/typebox';
import { DomainError, serverManagedFields, validator } from '@switchboard/contracts';
import type { EntityValues } from './record-reader.js';

/** PUT replaces every writable field (absent ones take their default); PATCH changes the given ones. */
export type WriteMode = 'replace' | 'merge';

/**
 * Longest string and list a stored record may hold. Records are read back a page (up to 1000) at a
 * time, and pg and the JSON answer hold a page whole: megabyte fields made a list read take gigabytes.
 */
export const MAX_STORED_STRING_LENGTH = 4096;
export const MAX_STORED_LIST_LENGTH = 256;

/**
 * Validates a request body against its contract schema (unknown fields and wrong types answer 400
 * naming each field) and drops the server-managed fields, which are accepted and ignored.
 */
export function readBody<T extends TObject>(schema: T, body: unknown): Partial<Static<T>> {
  const value = bodyObject(body);
  checkSizes(value, '');
  const parsed = validator(schema).parse(value) as EntityValues;
  const out: EntityValues = { ...parsed };
  for (const field of serverManagedFields(schema as unknown as EntityValues)) delete out[field];
  return out as Partial<Static<T>>;
}

/** The body as an object: no body at all reads as `{}`; a JSON `null`, array or scalar is a 400. */
export function bodyObject(body: unknown): object {
  const value = body === undefined ? {} : body;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new DomainError('ValidationFailed', 'The request body must be a JSON object.');
  return value;
}

/**
 * The writable state after a PUT or PATCH. `defaults` lists every writable field with the value a
 * PUT gives it when absent; `keep` names fields kept when absent or null (identity and secrets).
 */
export function nextState<S extends EntityValues>(
  current: S,
  body: EntityValues,
  mode: WriteMode,
  defaults: Partial<S>,
  keep: readonly (keyof S & string)[] = [],
): S {
  const next: EntityValues = { ...current };
  if (mode === 'replace') {
    for (const [field, value] of Object.entries(defaults)) next[field] = keep.includes(field) ? current[field] : value;
  }
  for (const [field, value] of Object.entries(body)) {
    if (value === undefined) continue;
    if (value === null && keep.includes(field)) continue;
    next[field] = value;
  }
  return next as S;
}

/** Refuses the first string or list over the stored limits, naming its field (`webhooks[0].url`). */
function checkSizes(value: unknown, field: string): void {
  if (typeof value === 'string') {
    if (value.length > MAX_STORED_STRING_LENGTH)
      throw invalid(field, `must be at most ${MAX_STORED_STRING_LENGTH} characters`);
  } else if (Array.isArray(value)) {
    if (value.length > MAX_STORED_LIST_LENGTH)
      throw invalid(field, `must have at most ${MAX_STORED_LIST_LENGTH} items`);
    value.forEach((item, index) => checkSizes(item, `${field}[${index}]`));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) checkSizes(item, field ? `${field}.${key}` : key);
  }
}

/** `http` and `https` URLs only (webhook targets). */
export function checkHttpUrl(value: string | null | undefined, field: string): void {
  if (value === null || value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(field, 'must be an absolute http or https URL');
  if (value.length > 2048) throw invalid(field, 'must be at most 2048 characters');
}

export function invalid(field: string, message: string): DomainError {
  return new DomainError('ValidationFailed', `${field} ${message}.`, [{ field, message }], field);
}
