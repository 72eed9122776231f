/** Loading plain records by entity model through TypeORM, and `$expand` of their navigations. */
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import type { ExpandItem, ExpandOptions } from './ast.js';
import { ODataError } from './errors.js';
import { fromStored, matches, sortRecords } from './evaluate.js';
import type { EntityModel, EntityRecord, NavigationModel, PropertyModel, RelationSpec } from './model.js';
import { quoteIdentifier, SqlCompiler, type TranslateOptions } from './sql-compiler.js';
import { applyODataFilter, applyODataOrderBy } from './typeorm.js';

interface LeafSelection {
  alias: string;
  path: string[];
  property: PropertyModel;
}

function leafSelections(compiler: SqlCompiler, model: EntityModel): Array<LeafSelection & { sql: string }> {
  const out: Array<LeafSelection & { sql: string }> = [];
  let n = 0;
  const visit = (p: PropertyModel, path: string[], parentColumns: boolean) => {
    if (p.kind === 'complex' && p.storage === 'columns') {
      for (const child of p.properties) visit(child, [...path, child.name], true);
      return;
    }
    if (parentColumns || path.length === 1)
      out.push({ alias: `c${n++}`, path, property: p, sql: compiler.propertyColumn(p) });
  };
  for (const p of model.properties) visit(p, [p.name], false);
  return out;
}

function storedToRecordValue(p: PropertyModel, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (p.kind) {
    case 'integer':
    case 'datetime-ms':
    case 'number': {
      const number = Number(v);
      return Number.isFinite(number) ? number : v;
    }
    case 'string':
    case 'boolean':
    case 'guid':
    case 'string-array':
    case 'complex':
      return v;
  }
}

/**
 * Selects every property of `model` (and the `column` of each JSONB navigation that names one) from a query builder
 * (aliases `c0`, `c1`, ..., `n0`, ...) and returns a function turning a raw row into a record keyed
 * by property names. int64 and numeric values become numbers.
 */
export function selectModelRecords(
  qb: SelectQueryBuilder<any>,
  model: EntityModel,
  alias: string,
): (raw: Record<string, unknown>) => Record<string, unknown> {
  const compiler = new SqlCompiler(alias);
  const leaves = leafSelections(compiler, model);
  leaves.forEach((leaf, i) => (i === 0 ? qb.select(leaf.sql, leaf.alias) : qb.addSelect(leaf.sql, leaf.alias)));
  // Inline (JSONB) navigations with a `column` travel with the row, under the record property
  // expandRecords reads.
  const inline = model.navigations.flatMap((n, i) =>
    n.relation.kind === 'jsonb' && n.relation.column !== undefined
      ? [{ alias: `n${i}`, property: n.relation.property ?? n.name, column: n.relation.column }]
      : [],
  );
  for (const nav of inline) qb.addSelect(`${quoteIdentifier(alias)}.${quoteIdentifier(nav.column)}`, nav.alias);
  return (raw) => {
    const record: Record<string, unknown> = {};
    for (const nav of inline) record[nav.property] = raw[nav.alias] ?? null;
    for (const leaf of leaves) {
      let target = record;
      for (const seg of leaf.path.slice(0, -1)) target = (target[seg] ??= {}) as Record<string, unknown>;
      target[leaf.path.at(-1)!] = storedToRecordValue(leaf.property, raw[leaf.alias]);
    }
    return record;
  };
}

export interface ExpandRecordsOptions extends TranslateOptions {
  /** Most related rows one foreign-key expansion may load (default 10,000). */
  maxRows?: number;
}

type QueryRunnerSource = Pick<DataSource, 'createQueryBuilder'> | Pick<EntityManager, 'createQueryBuilder'>;

/** A key value as a map key: ids compare case-insensitively (GUIDs), other values by their text. */
function keyOf(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') return v.toLowerCase();
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return v instanceof Date ? v.toISOString() : JSON.stringify(v);
}

/** Applies nested $filter / $orderby / $skip / $top to one collection, returning page and count. */
function pageCollection(
  children: EntityRecord[],
  options: ExpandOptions,
  model: EntityModel,
): { page: EntityRecord[]; count: number } {
  const filtered = children.filter((c) => matches(options.filter, c));
  const sorted = sortRecords(filtered, options.orderBy, (row) => fromStored(model.key.kind, row[model.key.name]));
  const skip = options.skip ?? 0;
  const page = options.top === undefined ? sorted.slice(skip) : sorted.slice(skip, skip + options.top);
  return { page, count: filtered.length };
}

/**
 * Loads `$expand`ed navigation properties into `records` (in place): `jsonb` relations are
 * filtered, sorted and paged in memory with the evaluator; `foreign-key` relations are loaded with
 * one query per navigation (keys bound as parameters, nested `$filter` translated to SQL) and paged
 * per parent. Nested `$count=true` adds `<name>@odata.count`.
 */
export async function expandRecords(
  source: QueryRunnerSource,
  records: EntityRecord[],
  expand: readonly ExpandItem[],
  model: EntityModel,
  options: ExpandRecordsOptions = {},
): Promise<void> {
  for (const item of expand) {
    const nav = item.navigation;
    if (!nav) throw new Error('expandRecords needs a bound query (parseQueryOptions with an entity model)');
    const children =
      nav.relation.kind === 'jsonb'
        ? expandInline(records, nav, nav.relation, item.options)
        : await expandByForeignKey(source, records, model, nav, nav.relation, item.options, options);
    if (item.options.expand.length > 0 && children.length > 0)
      await expandRecords(source, children, item.options.expand, nav.target, options);
  }
}

type JsonbRelation = Extract<RelationSpec, { kind: 'jsonb' }>;
type ForeignKeyRelation = Extract<RelationSpec, { kind: 'foreign-key' }>;

/** Pages the related objects stored inside each record; answers every child kept. */
function expandInline(
  records: EntityRecord[],
  nav: NavigationModel,
  relation: JsonbRelation,
  opts: ExpandOptions,
): EntityRecord[] {
  const kept: EntityRecord[] = [];
  const from = relation.property ?? nav.name;
  for (const record of records) {
    const stored = record[from];
    if (nav.many) {
      const list = Array.isArray(stored)
        ? (stored.filter((c) => c !== null && typeof c === 'object') as EntityRecord[])
        : [];
      const { page, count } = pageCollection(list, opts, nav.target);
      record[nav.name] = page;
      if (opts.count) record[`${nav.name}@odata.count`] = count;
      kept.push(...page);
    } else {
      const child =
        stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as EntityRecord) : null;
      record[nav.name] = child;
      if (child) kept.push(child);
    }
  }
  return kept;
}

/** Loads the related rows of all records in one query and pages them per parent; answers every child kept. */
async function expandByForeignKey(
  source: QueryRunnerSource,
  records: EntityRecord[],
  model: EntityModel,
  nav: NavigationModel,
  relation: ForeignKeyRelation,
  opts: ExpandOptions,
  options: ExpandRecordsOptions,
): Promise<EntityRecord[]> {
  const localKey = model.property(relation.localKey);
  const foreignKey = nav.target.property(relation.foreignKey);
  if (!localKey || !foreignKey) throw new Error(`Navigation ${nav.name}: key properties not found`);
  if (!nav.target.table) throw new Error(`Navigation ${nav.name}: target model ${nav.target.name} has no table`);
  const keys = new Map<string, unknown>();
  for (const record of records) {
    const key = keyOf(record[localKey.name]);
    if (key !== undefined) keys.set(key, record[localKey.name]);
  }
  const groups =
    keys.size > 0 ? await loadRelated(source, nav, foreignKey, [...keys.values()], opts, options) : new Map();
  const kept: EntityRecord[] = [];
  for (const record of records) {
    const key = keyOf(record[localKey.name]);
    const children: EntityRecord[] = (key !== undefined && groups.get(key)) || [];
    if (nav.many) {
      const skip = opts.skip ?? 0;
      const page = opts.top === undefined ? children.slice(skip) : children.slice(skip, skip + opts.top);
      record[nav.name] = page;
      if (opts.count) record[`${nav.name}@odata.count`] = children.length;
      kept.push(...page);
    } else {
      record[nav.name] = children[0] ?? null;
      if (children[0]) kept.push(children[0]);
    }
  }
  return kept;
}

/** The target rows whose foreign key is one of `keyValues`, grouped by that key. */
async function loadRelated(
  source: QueryRunnerSource,
  nav: NavigationModel,
  foreignKey: PropertyModel,
  keyValues: unknown[],
  opts: ExpandOptions,
  options: ExpandRecordsOptions,
): Promise<Map<string, EntityRecord[]>> {
  const target = nav.target;
  const alias = '_odx';
  const qb = source.createQueryBuilder().from(target.table!, alias);
  const toRecord = selectModelRecords(qb, target, alias);
  const compiler = new SqlCompiler(alias, new Set(), options);
  const placeholders = keyValues.map((value) => compiler.param(value));
  qb.where(`(${compiler.propertyColumn(foreignKey)} IN (${placeholders.join(', ')}))`);
  qb.setParameters(compiler.parameters);
  if (opts.filter) applyODataFilter(qb, opts.filter, target, alias, options);
  if (nav.many) applyODataOrderBy(qb, opts.orderBy, target, alias, options);
  const maxRows = options.maxRows ?? 10_000;
  qb.limit(maxRows + 1);
  const rows = (await qb.getRawMany()) as EntityRecord[];
  if (rows.length > maxRows) {
    throw new ODataError(
      'QueryLimitExceeded',
      '$expand',
      `expanding ${nav.name} would load more than ${maxRows} records; add $filter or $top`,
    );
  }
  const groups = new Map<string, EntityRecord[]>();
  for (const raw of rows) {
    const child = toRecord(raw);
    const key = keyOf(child[foreignKey.name]);
    if (key === undefined) continue;
    let list = groups.get(key);
    if (!list) groups.set(key, (list = []));
    list.push(child);
  }
  return groups;
}
