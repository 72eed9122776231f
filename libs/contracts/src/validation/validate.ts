import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { CHECKED_SEPARATELY_KEYWORD, findMalformedText, printable } from './well-formed.js';

/** One offending field: `field` is a dotted path (`codec.vp8.bitrate`, `videoEncodings[3]`). */
export interface FieldError {
  field: string;
  message: string;
}

/** Thrown when a value does not match its contract. Carries every offending field. */
export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
  constructor(
    readonly contract: string,
    readonly errors: FieldError[],
  ) {
    super(`${contract}: ${errors.map((e) => `${e.field || '(body)'}: ${e.message}`).join('; ')}`);
  }
}

export interface Validator<T extends TSchema> {
  readonly schema: T;
  readonly name: string;
  check(value: unknown): value is Static<T>;
  errors(value: unknown): FieldError[];
  /** Returns the value typed, or throws ContractViolation naming each offending field. */
  parse(value: unknown): Static<T>;
}

const cache = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * Builds (once per schema) a compiled validator. Schemas reject unknown fields (`additionalProperties: false`);
 * after the schema, every string and key must be storable text (see well-formed.ts).
 */
export function validator<T extends TSchema>(schema: T, name = schema.$id ?? schema.title ?? 'value'): Validator<T> {
  let compiled = cache.get(schema) as TypeCheck<T> | undefined;
  if (!compiled) {
    compiled = TypeCompiler.Compile(schema);
    cache.set(schema, compiled);
  }
  const check = compiled;
  const skip = checkedSeparately(schema);
  const errors = (value: unknown): FieldError[] => {
    const schemaErrors = collectErrors(check, value);
    if (schemaErrors.length) return schemaErrors;
    const malformed = findMalformedText(value, skip);
    return malformed ? [malformed] : [];
  };
  return {
    schema,
    name,
    check: (value: unknown): value is Static<T> => check.Check(value) && findMalformedText(value, skip) === undefined,
    errors,
    parse(value: unknown): Static<T> {
      if (check.Check(value) && findMalformedText(value, skip) === undefined) return value;
      throw new ContractViolation(name, errors(value));
    },
  };
}

/** Top-level properties marked `x-checked-separately`: their text is checked by their own validator. */
function checkedSeparately(schema: TSchema): ReadonlySet<string> | undefined {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  const names = Object.entries(properties ?? {})
    .filter(([, property]) => property[CHECKED_SEPARATELY_KEYWORD] === true)
    .map(([name]) => name);
  return names.length ? new Set(names) : undefined;
}

function collectErrors(check: TypeCheck<TSchema>, value: unknown): FieldError[] {
  const out = new Map<string, string>();
  const add = (errors: Iterable<ValueError>) => {
    for (const error of errors) {
      if (out.size >= 50) return;
      const inner = nonNullBranchErrors(error);
      if (inner) {
        add(inner);
        continue;
      }
      const field = printable(toFieldPath(error.path));
      // The first error for a field is the most specific one.
      if (!out.has(field)) out.set(field, describe(error));
    }
  };
  add(check.Errors(value));
  return [...out].map(([field, message]) => ({ field, message }));
}

/**
 * For `T|null` where the value is a non-null object or array, the useful errors are those of the
 * `T` branch: they name the field inside (`channelRecording.ready`), not just the union.
 */
function nonNullBranchErrors(error: ValueError): ValueError[] | undefined {
  if (error.type !== ValueErrorType.Union || error.value === null || typeof error.value !== 'object') return undefined;
  const branches = (error.schema.anyOf ?? []) as TSchema[];
  const index = branches.findIndex((b) => b.type === (Array.isArray(error.value) ? 'array' : 'object'));
  if (index < 0 || branches.filter((b) => b.type !== 'null').length !== 1) return undefined;
  const inner = [...(error.errors[index] ?? [])];
  return inner.length ? inner : undefined;
}

/** `/codec/vp8/bitrate` -> `codec.vp8.bitrate`; `/videoEncodings/3` -> `videoEncodings[3]`. */
export function toFieldPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part;
  }
  return out;
}

type DescribedSchema = TSchema & { description?: string; errorMessage?: string };

/** Our wording of the errors we phrase ourselves; TypeBox's message (lower-cased) for the rest. */
const OWN_MESSAGES: Partial<Record<ValueErrorType, (schema: DescribedSchema) => string>> = {
  [ValueErrorType.ObjectAdditionalProperties]: () => 'unknown field',
  [ValueErrorType.ObjectRequiredProperty]: () => 'is required',
  [ValueErrorType.ArrayMaxItems]: (schema) => `must have at most ${String(schema.maxItems)} items`,
  [ValueErrorType.Union]: (schema) => `must be ${describeUnion(schema)}`,
};

function describe(error: ValueError): string {
  const schema = error.schema as DescribedSchema;
  if (schema.errorMessage) return schema.errorMessage;
  const own = OWN_MESSAGES[error.type];
  return own ? own(schema) : error.message.charAt(0).toLowerCase() + error.message.slice(1);
}

function describeUnion(schema: TSchema): string {
  const parts = ((schema.anyOf ?? []) as TSchema[]).map((s) =>
    s.const !== undefined ? JSON.stringify(s.const) : s.type === 'array' ? 'array' : String(s.type ?? 'value'),
  );
  return parts.length ? [...new Set(parts)].join(' or ') : 'a valid value';
}
