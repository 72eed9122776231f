/**
 * The hostile inputs: values that break string well-formedness, lengths, number ranges, percent
 * encoding and body framing, and the requests that carry them to every operation of an OpenAPI
 * document (path ids, every string and integer field of its request body, its integer and OData
 * query parameters). Each request says what it attacks, so a failing answer names its cause.
 */

/**
 * Values a string field must refuse: NUL and lone UTF-16 surrogates (JSON.stringify escapes them as \u0000, \ud800...).
 */
export const HOSTILE_STRINGS = {
  nul: 'a\u0000b',
  loneHighSurrogate: 'a\ud800b',
  loneLowSurrogate: 'a\udfffb',
} as const;

/** Overlong strings: over every id limit, and as far over every field limit as a 1 MiB body allows. */
export const OVERLONG = { id: 'x'.repeat(600), huge: 'x'.repeat(900_000) } as const;

/** Path ids as they appear in the URL: NUL, a lone surrogate (CESU bytes), bad percent encoding, overlong. */
export const HOSTILE_PATH_IDS: Record<string, string> = {
  nul: 'a%00b',
  loneSurrogate: 'a%ED%A0%80b',
  loneLowSurrogate: 'a%ED%BF%BFb',
  badPercentByte: 'a%FFb',
  overlongUtf8: 'a%E0%80b',
  barePercent: 'a%b',
  overlong600: 'x'.repeat(600),
};

/** Raw JSON number texts an int64 field must refuse (written into the body as is, not as strings). */
export const HOSTILE_INTEGERS: Record<string, string> = {
  int64Overflow: '9223372036854775808',
  infinite: '1e400',
  fraction: '1.5',
  negativeOverflow: '-9223372036854775809',
};

/** Query parameter texts an integer parameter must refuse. */
export const HOSTILE_INTEGER_QUERY: Record<string, string> = { ...HOSTILE_INTEGERS, notANumber: 'abc' };

/** Query parameter texts a string parameter must refuse: NUL, a lone surrogate, bad percent encoding. */
export const HOSTILE_QUERY_STRINGS: Record<string, string> = {
  nul: 'a%00b',
  loneSurrogate: 'a%ED%A0%80b',
  badPercentByte: 'a%FFb',
  barePercent: 'a%',
};

/** OData query options with hostile values (interface B). */
export const HOSTILE_ODATA: Record<string, string> = {
  filterNulLiteral: `$filter=${encodeURIComponent("id eq 'a\u0000b'")}`,
  filterSurrogateLiteral: `$filter=${encodeURIComponent("id eq 'a")}%ED%A0%80${encodeURIComponent("b'")}`,
  filterBadPercent: '$filter=id%20eq%20%27%FF%27',
  filterDeepNesting: `$filter=${encodeURIComponent(`${'('.repeat(2000)}true${')'.repeat(2000)}`)}`,
  filterDeepNot: `$filter=${encodeURIComponent(`${'not '.repeat(1500)}true`)}`,
  filterHugeLiteral: `$filter=${encodeURIComponent(`id eq '${'x'.repeat(6000)}'`)}`,
  filterManyOr: `$filter=${encodeURIComponent(Array.from({ length: 400 }, (_, i) => `id eq '${i}'`).join(' or '))}`,
  topInt64Overflow: '$top=9223372036854775808',
  topHuge: '$top=1e400',
  topNegative: '$top=-1',
  skipInt64Overflow: '$skip=9223372036854775808',
  skipFraction: '$skip=1.5',
  orderbyNul: '$orderby=id%00',
  selectSurrogate: '$select=id%ED%A0%80',
  countNotBoolean: '$count=maybe',
  expandUnknown: `$expand=${'x'.repeat(600)}`,
};

type Schema = {
  $ref?: string;
  type?: string | string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  pattern?: string;
  minLength?: number;
};

export interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ name: string; in: string; schema?: Schema }>;
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, Schema> };
}

export interface Operation {
  method: string;
  /** The path template, e.g. `/ApiKeys/{id}`. */
  template: string;
  pathParams: string[];
  integerQuery: string[];
  /** String query parameters other than the OData options ($filter...: HOSTILE_ODATA attacks those). */
  stringQuery: string[];
  odata: boolean;
  bodySchema: Schema | null;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** Every operation of a served OpenAPI document: a route added to a service is attacked without touching the corpus. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = op.parameters ?? [];
      const plainQuery = params.filter((p) => p.in === 'query' && !p.name.startsWith('$'));
      const integerQuery = plainQuery.filter((p) => resolve(doc, p.schema ?? {}).type === 'integer').map((p) => p.name);
      const stringQuery = plainQuery.filter((p) => resolve(doc, p.schema ?? {}).type === 'string').map((p) => p.name);
      operations.push({
        method: method.toUpperCase(),
        template,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        integerQuery,
        stringQuery,
        odata: params.some((p) => p.name === '$filter' || p.name === '$select'),
        bodySchema: op.requestBody?.content['application/json']?.schema ?? null,
      });
    }
  }
  return operations;
}

function resolve(doc: OpenApiDocument, schema: Schema): Schema {
  let current = schema;
  while (current.$ref) current = doc.components?.schemas?.[current.$ref.replace('#/components/schemas/', '')] ?? {};
  return current;
}

/** The non-null branch of `anyOf: [T, null]`, or the schema itself. */
function concrete(doc: OpenApiDocument, schema: Schema): Schema {
  const resolved = resolve(doc, schema);
  const branches = resolved.anyOf ?? resolved.oneOf;
  if (!branches) return resolved;
  const nonNull = branches.map((b) => resolve(doc, b)).find((b) => b.type !== 'null');
  return nonNull
    ? { ...resolve(doc, nonNull), ...(resolved.properties ? { properties: resolved.properties } : {}) }
    : resolved;
}

function typeOf(schema: Schema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
}

/** A value the schema accepts, as small as possible (required properties only). */
export function minimalValue(doc: OpenApiDocument, schema: Schema, depth = 0): unknown {
  const s = concrete(doc, schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  switch (typeOf(s) ?? 'untyped') {
    case 'string':
      return s.format === 'uuid'
        ? '00000000-0000-4000-8000-000000000000'
        : s.format === 'uri'
          ? 'https://example.com/hook'
          : 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'integer':
    case 'number':
      return Math.max(0, s.minimum ?? 0);
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      if (depth > 6) return {};
      return Object.fromEntries(
        (s.required ?? []).map((name) => [name, minimalValue(doc, s.properties?.[name] ?? {}, depth + 1)]),
      );
    default:
      return null;
  }
}

export interface Leaf {
  /** e.g. `webhooks[0].url` */
  path: string;
  kind: 'string' | 'integer';
  /** Whether a negative value is out of range for it. */
  nonNegative: boolean;
  maxLength: number | undefined;
  /** The minimal body with the leaf set to `placeholder`. */
  body: (placeholder: unknown) => unknown;
}

/** Every string and integer leaf of a request body schema, each with the minimal body that reaches it. */
export function leavesOf(doc: OpenApiDocument, schema: Schema): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (node: Schema, path: string, wrap: (value: unknown) => unknown, depth: number) => {
    const s = concrete(doc, node);
    const type = typeOf(s);
    if ((type === 'string' && !s.enum && s.const === undefined) || type === 'integer') {
      leaves.push({
        path,
        kind: type === 'string' ? 'string' : 'integer',
        nonNegative: (s.minimum ?? -1) >= 0,
        maxLength: (s as { maxLength?: number }).maxLength,
        body: wrap,
      });
      return;
    }
    if (depth > 4) return;
    if (type === 'array' && s.items) walk(s.items, `${path}[0]`, (value) => wrap([value]), depth + 1);
    if (type === 'object' && s.properties) {
      const base = minimalValue(doc, s, depth) as Record<string, unknown>;
      for (const [name, child] of Object.entries(s.properties)) {
        walk(child, path ? `${path}.${name}` : name, (value) => wrap({ ...base, [name]: value }), depth + 1);
      }
    }
  };
  walk(schema, '', (value) => value, 0);
  return leaves;
}

/** One hostile HTTP request; `raw` bodies are sent byte for byte. */
export interface HostileRequest {
  category: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

const PLACEHOLDER = '__hostile_number__';

/** The JSON text of a body whose integer leaf holds a raw number text JSON.stringify could not write. */
export function withRawNumber(leaf: Leaf, numberText: string): string {
  return JSON.stringify(leaf.body(PLACEHOLDER)).replace(`"${PLACEHOLDER}"`, numberText);
}

/**
 * The path of `template` with every parameter set from `ids`, one of them replaced by `hostile` (already URL-encoded).
 */
export function fillPath(
  template: string,
  ids: Record<string, string>,
  hostileParam?: string,
  hostile?: string,
): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name === hostileParam && hostile !== undefined ? hostile : encodeURIComponent(ids[name] ?? `unknown-${name}`),
  );
}

/**
 * The hostile requests for one operation: every hostile id in some path parameter (each category
 * once, rotating over the parameters), every hostile string and number in every body leaf, the
 * broken bodies, hostile integer query parameters and (interface B) hostile OData options.
 */
export function hostileRequestsFor(
  doc: OpenApiDocument,
  op: Operation,
  ids: Record<string, string>,
  query: string,
): HostileRequest[] {
  const requests: HostileRequest[] = [];
  const json = { 'content-type': 'application/json' };
  const validPath = fillPath(op.template, ids);
  const join = (path: string, extra?: string) =>
    `${path}${query || extra ? '?' : ''}${[query, extra].filter(Boolean).join('&')}`;
  const validBody = op.bodySchema ? JSON.stringify(minimalValue(doc, op.bodySchema)) : undefined;
  const withBody = (category: string, path: string) =>
    requests.push({
      category,
      method: op.method,
      path: join(path),
      headers: validBody === undefined ? {} : json,
      ...(validBody === undefined ? {} : { body: validBody }),
    });

  Object.entries(HOSTILE_PATH_IDS).forEach(([name, id], index) => {
    const param = op.pathParams[index % Math.max(1, op.pathParams.length)];
    if (param) withBody(`path-id:${name}`, fillPath(op.template, ids, param, id));
  });
  for (const name of op.integerQuery) {
    for (const [label, text] of Object.entries(HOSTILE_INTEGER_QUERY))
      requests.push({
        category: `query-integer:${label}`,
        method: op.method,
        path: join(validPath, `${name}=${text}`),
        headers: {},
      });
  }
  for (const name of op.stringQuery) {
    for (const [label, text] of Object.entries(HOSTILE_QUERY_STRINGS))
      requests.push({
        category: `query-string:${label}`,
        method: op.method,
        path: join(validPath, `${name}=${text}`),
        headers: {},
      });
  }
  if (op.odata) {
    for (const [label, option] of Object.entries(HOSTILE_ODATA))
      requests.push({ category: `odata:${label}`, method: op.method, path: join(validPath, option), headers: {} });
  }
  if (!op.bodySchema) return requests;

  for (const leaf of leavesOf(doc, op.bodySchema)) {
    if (leaf.kind === 'string') {
      for (const [label, value] of Object.entries(HOSTILE_STRINGS))
        requests.push({
          category: `body-string:${label}`,
          method: op.method,
          path: join(validPath),
          headers: json,
          body: JSON.stringify(leaf.body(value)),
        });
    } else {
      for (const [label, text] of Object.entries(HOSTILE_INTEGERS))
        requests.push({
          category: `body-integer:${label}`,
          method: op.method,
          path: join(validPath),
          headers: json,
          body: withRawNumber(leaf, text),
        });
      if (leaf.nonNegative)
        requests.push({
          category: 'body-integer:negative',
          method: op.method,
          path: join(validPath),
          headers: json,
          body: withRawNumber(leaf, '-1'),
        });
      requests.push({
        category: 'body-integer:string',
        method: op.method,
        path: join(validPath),
        headers: json,
        body: JSON.stringify(leaf.body('12')),
      });
    }
  }
  const framing: Array<[string, Record<string, string>, string | Buffer]> = [
    ['body:null', json, 'null'],
    ['body:array', json, '[]'],
    ['body:string', json, '"x"'],
    ['body:malformed', json, '{"a":'],
    ['body:form', { 'content-type': 'application/x-www-form-urlencoded' }, 'tag=x&id=1'],
    ['body:text', { 'content-type': 'text/plain' }, 'hello'],
    [
      'body:unknown-field',
      json,
      JSON.stringify({ ...(minimalValue(doc, op.bodySchema) as object), unknownHostileField: 1 }),
    ],
  ];
  for (const [category, headers, body] of framing)
    requests.push({ category, method: op.method, path: join(validPath), headers, body });
  return requests;
}

/**
 * Inputs a field may take or refuse, but never with a 5xx: a 900 000-character string in every
 * string leaf, and bytes that are not UTF-8 (Node reads them as U+FFFD, never as a lone surrogate).
 */
export function toleratedRequestsFor(
  doc: OpenApiDocument,
  op: Operation,
  ids: Record<string, string>,
  query: string,
): HostileRequest[] {
  if (!op.bodySchema) return [];
  const path = `${fillPath(op.template, ids)}${query ? `?${query}` : ''}`;
  const json = { 'content-type': 'application/json' };
  return leavesOf(doc, op.bodySchema)
    .filter((leaf) => leaf.kind === 'string')
    .flatMap((leaf) => {
      const [before, after] = JSON.stringify(leaf.body('__bytes__')).split('__bytes__') as [string, string];
      return [
        {
          category: 'body-string:overlong',
          method: op.method,
          path,
          headers: json,
          body: JSON.stringify(leaf.body(OVERLONG.huge)),
        },
        {
          category: 'body-string:invalid-utf8',
          method: op.method,
          path,
          headers: json,
          body: Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(after)]),
        },
      ];
    });
}
