/**
 * Building blocks of the record schemas of `interface-a/`, `interface-b/` and `webhooks/`: every
 * record is a TypeBox schema with a unique `$id` and no additional properties (contracts README).
 */
import {
  FormatRegistry,
  Type,
  type SchemaOptions,
  type TLiteral,
  type TNull,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  type TUnion,
} from '@sinclair/typebox';
import { validator, type Validator } from '../validation/validate.js';

// ---------------------------------------------------------------------------------------------
// String formats used by the catalog. TypeBox ships no format checkers; an unregistered format
// fails every value, so they are registered here, once, before any schema can be compiled.
// ---------------------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID in its text form, in either case (the `uuid` format of every schema here). */
export function isUuid(value: unknown): boolean {
  return typeof value === 'string' && UUID.test(value);
}
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * RFC 3339 `date-time` (the JSON Schema format): full date, time and offset, each part in range. A
 * leap second (`:60`), which RFC 3339 allows, is refused: no service could store it (Date.parse
 * reads it as NaN), so it is a validation error here rather than an internal one further in.
 */
export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offH = 0, offM = 0] = m
    .slice(1)
    .map((p) => (p === undefined ? undefined : Number(p))) as number[];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offH <= 23 &&
    offM <= 59
  );
}

if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (value) => UUID.test(value));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);

// ---------------------------------------------------------------------------------------------
// Field helpers
// ---------------------------------------------------------------------------------------------

/** `T|null` of the spec notation. Options (description...) go on the union. */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()], options);
}

/** A field that may be absent or null (patch bodies, message bodies). */
export function OptionalNullable<T extends TSchema>(
  schema: T,
  options: SchemaOptions = {},
): TOptional<TUnion<[T, TNull]>> {
  return Type.Optional(Nullable(schema, options));
}

/** String enum as a union of literals (checked by the compiler, rendered as `anyOf` of `const`). */
export function StringEnum<const T extends readonly [string, ...string[]]>(
  values: T,
  options: SchemaOptions = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as TUnion<TLiteral<T[number]>[]>;
}

/**
 * An `int64` integer (interface B timestamps are Unix milliseconds; token `iat`/`exp` are Unix seconds).
 * JSON numbers are read as doubles, so the range is that of exact integers (±MAX_SAFE_INTEGER).
 */
export const Int64 = (options: SchemaOptions = {}) =>
  Type.Integer({ format: 'int64', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options });
export const Int32 = (options: SchemaOptions = {}) =>
  Type.Integer({ format: 'int32', minimum: -2147483648, maximum: 2147483647, ...options });
/** A count of entities: a non-negative integer. */
export const Count = (options: SchemaOptions = {}) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...options });
/** ISO 8601 / RFC 3339 date-time string (interface A timestamps). */
export const DateTime = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options });
export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: 'uuid', ...options });
export const StringList = (options: SchemaOptions = {}) => Type.Array(Type.String(), options);

/** Longest id, alias, tag or role a request may carry (the /sync frames' limit too). */
export const SHORT_TEXT_MAX_LENGTH = 256;
/** Longest message text a request may carry (the /sync frames' limit too). */
export const MESSAGE_MAX_LENGTH = 65536;
/** Most ids or roles a request's list may carry. */
export const SHORT_TEXT_LIST_MAX_ITEMS = 1000;
/** Request fields are bounded so that an oversized value is a 400, not work for the registry. */
export const ShortText = (options: SchemaOptions = {}) => Type.String({ maxLength: SHORT_TEXT_MAX_LENGTH, ...options });
export const ShortTextList = (options: SchemaOptions = {}) =>
  Type.Array(ShortText(), { maxItems: SHORT_TEXT_LIST_MAX_ITEMS, ...options });

/** Object schema of the catalog: named (`$id`), closed (`additionalProperties: false`). */
export function record<P extends TProperties>(
  id: string,
  properties: P,
  description?: string,
  options: SchemaOptions = {},
): TObject<P> {
  return Type.Object(properties, {
    $id: id,
    additionalProperties: false,
    ...(description ? { description } : {}),
    ...options,
  });
}

/** Makes every property of `props` optional and nullable (the shape of every patch body). */
export function patchFields<P extends TProperties>(props: P): { [K in keyof P]: TOptional<TUnion<[P[K], TNull]>> } {
  const out: Record<string, TSchema> = {};
  for (const [key, schema] of Object.entries(props)) out[key] = OptionalNullable(schema);
  return out as { [K in keyof P]: TOptional<TUnion<[P[K], TNull]>> };
}

// ---------------------------------------------------------------------------------------------
// Request-body variants of interface B records (one rule, applied to every writable record)
// ---------------------------------------------------------------------------------------------

type Props<T extends TObject> = T['properties'];
type Flat<T> = { [K in keyof T]: T[K] };
type AsOptional<S> = S extends TOptional<TSchema> ? S : TOptional<S & TSchema>;

export type CreateProps<T extends TObject, R extends keyof Props<T>, O extends TProperties> = Flat<
  { [K in Exclude<keyof Props<T>, R | keyof O>]: AsOptional<Props<T>[K]> } & { [K in R]: Props<T>[K] } & {
    [K in keyof O]: AsOptional<O[K]>;
  }
>;
export type UpdateProps<T extends TObject, O extends TProperties> = Flat<
  { [K in Exclude<keyof Props<T>, keyof O>]: AsOptional<Props<T>[K]> } & { [K in keyof O]: AsOptional<O[K]> }
>;

export interface WriteModelOptions<T extends TObject, R extends keyof Props<T>, O extends TProperties> {
  /** Fields the server sets (ids, audit stamps, owning organization): accepted in a body and ignored. */
  serverManaged: readonly (keyof Props<T> & string)[];
  /** Fields a create body must carry (the spec's "required"). Everything else is optional. */
  required?: readonly R[];
  /** Replacement schemas for some fields in request bodies (e.g. nested records as their update form). */
  overrides?: O;
}

/** The custom keyword that lists server-managed fields on a request-body schema (also an OpenAPI `x-` extension). */
export const SERVER_MANAGED_KEYWORD = 'x-server-managed';

/**
 * Builds the request bodies of a writable interface B record from the record (the response shape):
 * - `<Name>CreateBody` (POST): the spec's required fields stay required, every other field is optional;
 * - `<Name>UpdateBody` (PUT, and PATCH as a partial update): every field optional.
 * Server-managed fields stay in both with their record types, so a client may send back a record it
 * read; the service ignores them (they are listed under `x-server-managed`). Types and nullability of
 * every field are those of the record, so a body can never carry a value a record could not hold.
 */
export function writeModels<
  T extends TObject,
  const R extends keyof Props<T> & string = never,
  const O extends TProperties = {},
>(
  recordSchema: T,
  options: WriteModelOptions<T, R, O>,
): { Create: TObject<CreateProps<T, R, O>>; Update: TObject<UpdateProps<T, O>> } {
  const name = recordSchema.$id;
  if (!name) throw new Error('writeModels: the record needs a $id');
  const required = new Set<string>(options.required ?? []);
  const overrides: TProperties = options.overrides ?? {};
  const build = (suffix: 'Create' | 'Update', keepRequired: boolean) => {
    const props: Record<string, TSchema> = {};
    for (const [key, schema] of Object.entries(recordSchema.properties as TProperties)) {
      const field = overrides[key] ?? schema;
      props[key] = keepRequired && required.has(key) ? field : Type.Optional(field);
    }
    const verb = suffix === 'Create' ? 'create (POST)' : 'update (PUT, or PATCH as a partial update)';
    return Type.Object(props, {
      $id: `${name}${suffix}Body`,
      additionalProperties: false,
      description:
        `Request body to ${verb} a ${name}. ` +
        (keepRequired && required.size ? `Required: ${[...required].join(', ')}. ` : 'Every field is optional. ') +
        `Server-managed fields (${options.serverManaged.join(', ')}) may be sent and are ignored.`,
      [SERVER_MANAGED_KEYWORD]: [...options.serverManaged],
    });
  };
  return {
    Create: build('Create', true) as unknown as TObject<CreateProps<T, R, O>>,
    Update: build('Update', false) as unknown as TObject<UpdateProps<T, O>>,
  };
}

// ---------------------------------------------------------------------------------------------
// Registries
// ---------------------------------------------------------------------------------------------

export type SchemaRegistry = Readonly<Record<string, TSchema>>;
export type Validators<R extends SchemaRegistry> = { readonly [K in keyof R]: Validator<R[K]> };

/** One validator per registry entry, compiled on first access (and cached by `validator`). */
export function validatorsFor<R extends SchemaRegistry>(registry: R): Validators<R> {
  const out = {} as Record<string, Validator<TSchema>>;
  for (const [key, schema] of Object.entries(registry)) {
    let compiled: Validator<TSchema> | undefined;
    Object.defineProperty(out, key, {
      enumerable: true,
      get: () => (compiled ??= validator(schema, key)),
    });
  }
  return Object.freeze(out) as unknown as Validators<R>;
}
