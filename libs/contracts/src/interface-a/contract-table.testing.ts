/**
 * Test support (imported by the `*.spec.ts` files of the catalog only; not part of the library's
 * face): runs the table-driven contract tests over a schema registry.
 *
 * For every registry entry the table holds a valid sample and a field to break; the tests check
 * that the sample is accepted, that a wrong-typed value at that field is rejected naming the field,
 * and that an unknown top-level field is rejected naming it. A registry entry without a table row
 * (or a table row without an entry) fails, and so does an exported object schema missing from the
 * registry.
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import type { Validator } from '../validation/validate.js';
import type { SchemaRegistry } from './record-schema.js';

export interface ContractCase {
  /** A value the schema accepts. */
  valid: unknown;
  /** A field path (`codec.vp8.bitrate`, `videoEncodings[0].scale`) and a value of the wrong type for it. */
  wrong: { field: string; value: unknown };
  /** Open object (the Problem body): an unknown field is accepted instead of rejected. */
  open?: true;
}

export type ContractTable<R extends SchemaRegistry> = { readonly [K in keyof R]: ContractCase };

export function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Returns a copy of `value` with `path` (dots and `[n]`) set to `next`. */
export function withField(value: unknown, path: string, next: unknown): unknown {
  const copy = clone(value) as Record<string, unknown>;
  const parts = path.match(/[^.[\]]+/g) ?? [];
  let cursor: Record<string, unknown> = copy;
  parts.forEach((part, i) => {
    if (i === parts.length - 1) {
      cursor[part] = next;
    } else {
      const child = cursor[part];
      if (typeof child !== 'object' || child === null)
        throw new Error(`withField: ${path} does not exist in the sample`);
      cursor = child as Record<string, unknown>;
    }
  });
  return copy;
}

/** Every schema reachable from `schema` (properties, items, unions...). */
export function* walk(schema: TSchema): Generator<TSchema> {
  yield schema;
  const s = schema as Record<string, unknown>;
  if (s.properties) for (const child of Object.values(s.properties as Record<string, TSchema>)) yield* walk(child);
  if (s.items && typeof s.items === 'object') yield* walk(s.items as TSchema);
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) for (const child of s[key] as TSchema[]) yield* walk(child);
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    yield* walk(s.additionalProperties as TSchema);
}

export function isObjectSchema(value: unknown): value is TSchema {
  return typeof value === 'object' && value !== null && (value as TSchema)[Kind] === 'Object';
}

export function describeContracts<R extends SchemaRegistry>(
  title: string,
  registry: R,
  validators: { readonly [K in keyof R]: Validator<R[K]> },
  table: ContractTable<R>,
  moduleExports: Record<string, unknown>,
): void {
  describe(`${title} contract table`, () => {
    it('has exactly one sample per registry entry', () => {
      expect(Object.keys(table).sort()).toEqual(Object.keys(registry).sort());
    });

    it('registers every exported object schema', () => {
      const registered = new Set<unknown>(Object.values(registry));
      const missing = Object.entries(moduleExports)
        .filter(([, value]) => isObjectSchema(value) && !registered.has(value))
        .map(([name]) => name);
      expect(missing).toEqual([]);
    });

    it('names each entry by its $id', () => {
      const mismatched = Object.entries(registry)
        .filter(([name, schema]) => schema.$id !== name)
        .map(([name, schema]) => `${name} has $id ${String(schema.$id)}`);
      expect(mismatched).toEqual([]);
    });

    it('closes every object schema and gives it a unique $id', () => {
      const byId = new Map<string, string>();
      const problems: string[] = [];
      for (const root of Object.values(registry)) {
        for (const schema of walk(root)) {
          if (!isObjectSchema(schema)) continue;
          const id = schema.$id;
          if (typeof id !== 'string') {
            problems.push(`object without $id inside ${String(root.$id)}`);
            continue;
          }
          if (schema.additionalProperties !== false && !table[id as keyof R]?.open)
            problems.push(`${id} accepts unknown fields`);
          const text = JSON.stringify(schema);
          const seen = byId.get(id);
          if (seen !== undefined && seen !== text) problems.push(`two different schemas share the $id ${id}`);
          byId.set(id, text);
        }
      }
      expect(problems).toEqual([]);
    });

    describe.each(Object.keys(registry))('%s', (name) => {
      const key = name as keyof R & string;
      const c = table[key];
      const v = validators[key];

      it('accepts its valid sample', () => {
        expect(v.errors(c.valid)).toEqual([]);
        expect(v.check(c.valid)).toBe(true);
      });

      it(`rejects a wrong type, naming the field`, () => {
        const broken = withField(c.valid, c.wrong.field, c.wrong.value);
        expect(v.check(broken)).toBe(false);
        // The field itself, or the precise element inside it (`events[0]`, `claim.canKick`).
        const named = v.errors(broken).map((e) => e.field);
        expect(
          named.filter(
            (f) => f === c.wrong.field || f.startsWith(`${c.wrong.field}.`) || f.startsWith(`${c.wrong.field}[`),
          ),
        ).not.toEqual([]);
      });

      it('rejects an unknown field, naming it', () => {
        const extended = { ...(c.valid as object), unexpectedField: 1 };
        if (c.open) {
          expect(v.check(extended)).toBe(true);
        } else {
          expect(v.errors(extended)).toEqual([{ field: 'unexpectedField', message: 'unknown field' }]);
        }
      });
    });
  });
}
