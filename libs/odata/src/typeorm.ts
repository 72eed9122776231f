/**
 * Applies parsed queries to TypeORM's SelectQueryBuilder on PostgreSQL (WHERE, ORDER BY, LIMIT,
 * OFFSET and the count query); the SQL itself comes from `SqlCompiler`.
 */
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { ExprNode, ODataQuery, OrderByItem } from './ast.js';
import { tiebreakDescending } from './evaluate.js';
import type { EntityModel } from './model.js';
import { SqlCompiler, type TranslateOptions } from './sql-compiler.js';

type AnyQb = SelectQueryBuilder<any>;

function newCompiler(qb: AnyQb, alias: string, options?: TranslateOptions): SqlCompiler {
  return new SqlCompiler(alias, new Set(Object.keys(qb.getParameters())), options);
}

/** ANDs a condition to the query, bracketing the caller's existing conditions first. */
function andWhereIsolated(qb: AnyQb, sql: string): void {
  const existing = qb.expressionMap.wheres;
  if (existing.length > 0) {
    qb.expressionMap.wheres = [{ type: 'simple', condition: { operator: 'brackets', condition: existing } }];
  }
  qb.andWhere(`(${sql})`);
}

/** Adds the `$filter` condition (if any) to the query. */
export function applyODataFilter<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  filter: ExprNode | undefined,
  _model: EntityModel,
  alias: string,
  options?: TranslateOptions,
): SelectQueryBuilder<T> {
  if (!filter) return qb;
  const compiler = newCompiler(qb, alias, options);
  const sql = compiler.where(filter);
  qb.setParameters(compiler.parameters);
  andWhereIsolated(qb, sql);
  return qb;
}

/**
 * Adds ORDER BY for the items, then the key as a stable tiebreak in the direction of the last item
 * (so `changedOn desc` can walk an index on `(…, changed_on, id)` backwards). Nulls sort first
 * ascending and last descending (OData); NOT NULL properties get no NULLS clause, which PostgreSQL
 * needs to use a plain index for the order.
 */
export function applyODataOrderBy<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  orderBy: readonly OrderByItem[],
  model: EntityModel,
  alias: string,
  options?: TranslateOptions,
): SelectQueryBuilder<T> {
  const compiler = newCompiler(qb, alias, options);
  const seen = new Set<string>();
  const add = (sql: string, desc: boolean, nullable: boolean) => {
    if (seen.has(sql)) return;
    seen.add(sql);
    qb.addOrderBy(sql, desc ? 'DESC' : 'ASC', nullable ? (desc ? 'NULLS LAST' : 'NULLS FIRST') : undefined);
  };
  for (const item of orderBy) {
    const sql = compiler.orderExpression(item.expr);
    const nonNull =
      item.expr.kind === 'property' && item.expr.resolved?.chain.length === 1 && !item.expr.resolved.leaf.nullable;
    if (sql) add(sql, item.direction === 'desc', !nonNull);
  }
  qb.setParameters(compiler.parameters);
  const key = compiler.propertyColumn(model.key);
  add(model.key.kind === 'string' ? `(${key} COLLATE "C")` : key, tiebreakDescending(orderBy), false);
  return qb;
}

export interface AppliedODataQuery<T extends ObjectLiteral> {
  /** The caller's query builder with WHERE, ORDER BY, LIMIT and OFFSET added. */
  query: SelectQueryBuilder<T>;
  /** With `$count=true`: a separate query selecting `COUNT(*) AS "count"` under the same WHERE. */
  countQuery?: SelectQueryBuilder<T>;
}

/**
 * Applies a parsed query to a TypeORM SelectQueryBuilder on PostgreSQL: WHERE ($filter), ORDER BY
 * ($orderby + key), LIMIT ($top or the default page) and OFFSET ($skip). `$select` and `$expand`
 * are applied to the loaded records (`projectRecord`, `expandRecords`). Uses LIMIT/OFFSET, so
 * callers should not add to-many joins to the builder.
 */
export function applyODataQuery<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  query: ODataQuery,
  model: EntityModel,
  alias: string,
  options?: TranslateOptions,
): AppliedODataQuery<T> {
  applyODataFilter(qb, query.filter, model, alias, options);
  const countQuery = query.count
    ? qb.clone().select('COUNT(*)', 'count').orderBy().limit(undefined).offset(undefined)
    : undefined;
  applyODataOrderBy(qb, query.orderBy, model, alias, options);
  qb.limit(query.top).offset(query.skip);
  return countQuery ? { query: qb, countQuery } : { query: qb };
}

/** Runs a count query made by applyODataQuery. */
export async function executeCount(countQuery: SelectQueryBuilder<any>): Promise<number> {
  const row = (await countQuery.getRawOne()) as { count?: string | number } | undefined;
  return Number(row?.count ?? 0);
}
