import { DataSource } from 'typeorm';
import type { ODataQuery } from './ast.js';
import { ODataError } from './errors.js';
import { parseQueryOptions } from './options.js';
import { itemModel } from './testing/models.js';
import { applyODataQuery } from './typeorm.js';

/** A PostgreSQL DataSource that is never connected: enough to build SQL text. */
const dataSource = new DataSource({ type: 'postgres' });

const MARK = 'INJ';
const corpus: string[] = [
  `${MARK}'`,
  `${MARK}''`,
  `${MARK}' OR '1'='1`,
  `${MARK}'; DROP TABLE items; --`,
  `${MARK}--`,
  `${MARK}/* comment */`,
  `${MARK};`,
  `${MARK}%`,
  `${MARK}_`,
  `${MARK}\\`,
  `${MARK}\\'`,
  `${MARK}%_\\%`,
  `${MARK}$1`,
  `${MARK}$$ $tag$`,
  `${MARK}:odata_0`,
  `${MARK} :name :...list`,
  `${MARK}"; DROP TABLE "items`,
  `${MARK}E'\\x27'`,
  `${MARK}ü😀 Σ İ \u202e RTL`,
  `${MARK}\n\r\t`,
  `${MARK}\u0000`,
  `${MARK}\ud800`,
  `${MARK}${"'%_\\".repeat(1500)}`,
  `${MARK}${'x'.repeat(100_000)}`,
];

/** Every quoted constant the translator itself may emit (JSON keys of the model, fixed SQL). */
const ALLOWED_SQL_STRINGS = new Set([
  "'string'",
  "'number'",
  "'boolean'",
  "'street'",
  "'city'",
  "'zip'",
  "'geo'",
  "'lat'",
  "E'\\\\'",
]);

function odataString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function templates(payload: string): string[] {
  const lit = odataString(payload);
  return [
    `name eq ${lit}`,
    `name ne ${lit} and s gt ${lit}`,
    `contains(name,${lit})`,
    `startswith(name,${lit}) or endswith(address/city,${lit})`,
    `name in (${lit},'x',null)`,
    `tolower(name) eq ${lit}`,
    `concat(name,${lit}) eq trim(s)`,
    `indexof(name,${lit}) eq 1 and length(${lit}) gt 0`,
    `substring(${lit},1,2) eq name`,
    // The payload pasted without OData escaping: either an ODataError or bound parameters.
    `name eq '${payload}'`,
    `contains(name,'${payload}')`,
  ];
}

/** The parsed query, or the rejection: zero or one of each. */
function parseOrReject(filter: string, orderby?: string): { queries: ODataQuery[]; rejections: unknown[] } {
  try {
    const query = parseQueryOptions(
      { $filter: filter, ...(orderby ? { $orderby: orderby } : {}), $count: 'true' },
      itemModel,
    );
    return { queries: [query], rejections: [] };
  } catch (e) {
    return { queries: [], rejections: [e] };
  }
}

function check(filter: string, orderby?: string): 'parsed' | 'rejected' {
  const { queries, rejections } = parseOrReject(filter, orderby);
  for (const rejection of rejections) {
    expect(rejection).toBeInstanceOf(ODataError);
    expect((rejection as ODataError).message).not.toMatch(/SELECT|WHERE|CAST\(/);
  }
  for (const query of queries) expectSafeSql(query);
  return queries.length > 0 ? 'parsed' : 'rejected';
}

function expectSafeSql(query: ODataQuery): void {
  const qb = dataSource.createQueryBuilder().select('"t"."id"', 'id').from('items', 't');
  const { query: applied, countQuery } = applyODataQuery(qb, query, itemModel, 't');
  for (const built of [applied, countQuery!]) {
    const [sql, params] = built.getQueryAndParameters();
    expect(sql).not.toContain(MARK);
    expect(sql).not.toContain('--');
    expect(sql).not.toContain(';');
    expect(sql).not.toMatch(/:odata_/);
    const quoted = sql.match(/E?'(?:[^']|'')*'/g) ?? [];
    for (const q of quoted) expect(ALLOWED_SQL_STRINGS).toContain(q);
    // Every placeholder is a positional parameter and the payload travels as a value.
    const placeholders = new Set((sql.match(/\$\d+/g) ?? []).map((p) => Number(p.slice(1))));
    expect(Math.max(0, ...placeholders)).toBe(params.length);
    expect(params.some((p) => typeof p === 'string' && p.includes(MARK))).toBe(true);
  }
}

describe('injection corpus through the parser and the translator', () => {
  it.each(corpus.map((p) => [JSON.stringify(p.slice(0, 40)), p]))('%s', (_name, payload) => {
    const unstorable = payload.includes('\u0000') || payload.includes('\ud800');
    const filters = templates(payload);
    const outcomes = filters.map((filter) => check(filter));
    // Too long (over 8192 characters) or not storable in PostgreSQL text: a clean rejection.
    // The properly escaped forms always parse; the unescaped ones may go either way.
    const expected = filters.map((filter, i) =>
      unstorable || filter.length > 8192 ? 'rejected' : i < 9 ? 'parsed' : outcomes[i],
    );
    expect(outcomes).toEqual(expected);
  });

  it('binds literals used in $orderby expressions', () => {
    expect(check(`name eq '${MARK}'`, `concat(name,'${MARK}''; --') desc,indexof(s,'${MARK}%')`)).toBe('parsed');
  });

  it.each([
    'name"; DROP TABLE x; -- eq 1',
    'name eq 1; DROP TABLE x',
    "name eq 'a' -- comment",
    'name eq 1 /* x */',
    "name eq 'a'' OR 1=1",
    'name eq $1',
    'name eq :p',
    "name eq E'a'",
    "name eq U&'a'",
  ])('rejects SQL fragments as OData syntax: %s', (filter) => {
    expect(check(filter)).toBe('rejected');
  });

  it.each([
    ['$select', 'name;drop'],
    ['$select', 'name--'],
    ['$orderby', 'name; drop table x'],
    ['$orderby', 'name desc nulls first'],
    ['$expand', 'lines;drop'],
    ['$top', '1; drop'],
    ['$skip', '1 OR 1=1'],
  ])('rejects injection in %s: %s', (option, value) => {
    expect(() => parseQueryOptions({ [option]: value }, itemModel)).toThrow(ODataError);
  });
});
