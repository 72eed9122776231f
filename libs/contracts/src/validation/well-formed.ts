import type { FieldError } from './validate.js';

/**
 * Text every service can store and forward: valid Unicode (no lone surrogate, which UTF-8 cannot
 * encode) and no U+0000 (PostgreSQL refuses it in text and jsonb). Checked on every string and
 * object key of a value that passed its schema, so no entry point lets such a string reach an event.
 */
const hasLoneSurrogate = (text: string): boolean => !(text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Why `text` cannot be stored, or undefined when it can. */
export function malformedText(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain U+0000 (NUL)';
  if (hasLoneSurrogate(text)) return 'must be well-formed Unicode (no lone surrogate)';
  return undefined;
}

function malformedKey(key: string): string | undefined {
  if (key.includes('\u0000')) return 'has a field name containing U+0000 (NUL)';
  if (hasLoneSurrogate(key)) return 'has a field name that is not well-formed Unicode (lone surrogate)';
  return undefined;
}

/** `text` with NUL and lone surrogates replaced by U+FFFD: safe to echo in an error message. */
export function printable(text: string): string {
  const fixed = (text as unknown as { toWellFormed(): string }).toWellFormed();
  return fixed.includes('\u0000') ? fixed.replaceAll('\u0000', '\uFFFD') : fixed;
}

/**
 * The first string (or object key) of `value` that cannot be stored, as a field error with its
 * dotted path (`channels[0].id`), or undefined. One pass; the path is built only on failure.
 */
export function findMalformedText(value: unknown, checkedSeparately?: ReadonlySet<string>): FieldError | undefined {
  const trail: (string | number)[] = [];
  const message = walk(value, trail, checkedSeparately);
  return message === undefined ? undefined : { field: pathOf(trail), message };
}

/**
 * Marks a property whose value another validator checks, text included (the `data` of a /sync
 * frame, checked by the schema of its `type`): the enclosing validator skips it, so the value is
 * walked once and its errors come from the validator that names them properly.
 */
export const CHECKED_SEPARATELY_KEYWORD = 'x-checked-separately';

function walk(value: unknown, trail: (string | number)[], skip?: ReadonlySet<string>): string | undefined {
  if (typeof value === 'string') return malformedText(value);
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const message = walk(value[index], trail);
      if (message !== undefined) {
        trail.unshift(index);
        return message;
      }
    }
    return undefined;
  }
  // for...in allocates no key array (this runs on every /sync frame); parsed JSON has own keys only.
  for (const key in value) {
    if (skip?.has(key)) continue;
    // A bad key is named by its container: echoing the key itself would carry the bad text along.
    const keyProblem = malformedKey(key);
    if (keyProblem !== undefined) return keyProblem;
    const message = walk((value as Record<string, unknown>)[key], trail);
    if (message !== undefined) {
      trail.unshift(key);
      return message;
    }
  }
  return undefined;
}

function pathOf(trail: readonly (string | number)[]): string {
  let out = '';
  for (const part of trail) out += typeof part === 'number' ? `[${part}]` : out ? `.${part}` : part;
  return out;
}
