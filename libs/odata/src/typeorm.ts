/**
 * PostgreSQL translation through TypeORM's SelectQueryBuilder (the only framework-dependent file).
 *
 * Guarantees:
 * - every literal from the query is bound as a named parameter with a fresh, unique name; user
 *   text never enters the SQL string (only model-defined column names and fixed SQL do);
 * - every operator is parenthesised, so the generated SQL does not depend on SQL precedence;
 * - semantics match `evaluate()` exactly (see evaluate.ts): null-safe eq/ne, false for ordered
 *   comparisons with null, three-valued and/or/not, exact integer arithmetic on `numeric` (no
 *   overflow errors) with `div` truncating like OData, doubles for decimals, null for division by
 *   zero, code-point string order (`COLLATE "C"`), Unicode case mapping (ICU `und` collation),
 *   code-point `length`/`indexof`/`substring`, calendar parts computed arithmetically from epoch
 *   milliseconds (proleptic Gregorian, no timestamp range errors).
 *
 * Known difference: double arithmetic that overflows (beyond ±1.8e308) or underflows raises a
 * PostgreSQL error, where JavaScript yields Infinity or 0.
 */
import type { DataSource, EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { ExpandItem, ExpandOptions, ExprNode, LiteralNode, ODataQuery, OrderByItem, ValueType } from './ast.js';
import { isNumeric } from './binder.js';
import { ODataError } from './errors.js';
import { TRIM_CHARACTERS, fromStored, matches, sortRecords, tiebreakDescending } from './evaluate.js';
import type { EntityModel, PropertyModel } from './model.js';

export interface TranslateOptions {
  /**
   * Collation used for `tolower`/`toupper` so that case mapping follows Unicode like JavaScript.
   * Default `und-x-icu` (PostgreSQL built with ICU); null uses the column / database collation.
   */
  caseMappingCollation?: string | null;
  /** Prefix of generated parameter names (letters, digits, underscore). Default `odata_`. */
  parameterPrefix?: string;
}

const DEFAULT_CASE_COLLATION = 'und-x-icu';

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Quotes model-defined text (JSON keys) as a SQL string constant; never used for user input. */
function quoteModelString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function sqlTypeOf(t: ValueType): string {
  switch (t) {
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'datetime':
      return 'numeric';
    case 'decimal':
      return 'double precision';
    case 'guid':
      return 'uuid';
    default:
      return 'text';
  }
}

function isNullLiteral(n: ExprNode): boolean {
  return n.kind === 'literal' && n.value === null;
}

function commonType(a: ValueType, b: ValueType): ValueType {
  if (a === 'null') return b === 'null' ? 'string' : b;
  if (b === 'null') return a;
  if (isNumeric(a) && isNumeric(b)) return a === 'decimal' || b === 'decimal' ? 'decimal' : 'integer';
  return a;
}

type Mode = 'truth' | 'definite';

/** Compiles bound expression trees to PostgreSQL, collecting parameters. */
export class SqlCompiler {
  readonly parameters: Record<string, unknown> = {};
  private counter = 0;
  private subqueries = 0;
  private trimParam: string | undefined;
  private readonly quotedAlias: string;
  private readonly caseCollation: string | null;
  private readonly prefix: string;

  constructor(
    alias: string,
    private readonly reserved: ReadonlySet<string> = new Set(),
    options: TranslateOptions = {},
  ) {
    this.quotedAlias = quoteIdentifier(alias);
    this.caseCollation =
      options.caseMappingCollation === undefined ? DEFAULT_CASE_COLLATION : options.caseMappingCollation;
    this.prefix = options.parameterPrefix ?? 'odata_';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(this.prefix))
      throw new Error('parameterPrefix must be letters, digits and underscores');
  }

  /** Binds a value and returns its placeholder (`:name`). */
  param(value: unknown): string {
    let name: string;
    do name = `${this.prefix}${this.counter++}`;
    while (this.reserved.has(name) || Object.hasOwn(this.parameters, name));
    this.parameters[name] = value;
    return `:${name}`;
  }

  private subqueryAlias(): string {
    return `_odq${this.subqueries++}`;
  }

  // ---- entry points ---------------------------------------------------------------------------

  /** A WHERE condition (null and false both reject a row). */
  where(node: ExprNode): string {
    return this.bool(node, 'truth');
  }

  /** An ORDER BY expression. */
  orderExpression(node: ExprNode): string | undefined {
    const t = this.typeOf(node);
    if (t === 'null') return undefined;
    if (t === 'boolean') return this.bool(node, 'definite');
    const sql = this.value(node, t);
    return t === 'string' ? `(${sql} COLLATE "C")` : sql;
  }

  propertyColumn(property: PropertyModel): string {
    return property.sql ? property.sql(this.quotedAlias) : `${this.quotedAlias}.${quoteIdentifier(property.column)}`;
  }

  // ---- helpers --------------------------------------------------------------------------------

  private typeOf(node: ExprNode): ValueType {
    if (!node.type)
      throw new Error('The SQL translator needs a bound tree: use parseQueryOptions with an entity model');
    return node.type;
  }

  private literal(node: LiteralNode, as: ValueType): string {
    if (node.value === null) return `CAST(NULL AS ${sqlTypeOf(as === 'null' ? 'string' : as)})`;
    let sql: string;
    switch (node.type) {
      case 'boolean':
        sql = `CAST(${this.param(node.value)} AS boolean)`;
        break;
      case 'string':
        sql = `CAST(${this.param(node.value)} AS text)`;
        break;
      case 'integer':
      case 'datetime':
        sql = `CAST(${this.param(String(node.value))} AS bigint)`;
        break;
      case 'decimal':
        sql = `CAST(${this.param(node.value)} AS double precision)`;
        break;
      case 'guid':
        sql = `CAST(${this.param(node.value)} AS uuid)`;
        break;
      default:
        throw new Error(`unexpected literal type ${node.type}`);
    }
    return as === 'decimal' && node.type !== 'decimal' ? `CAST(${sql} AS double precision)` : sql;
  }

  /** SQL of a (possibly nested) property, as a value of its natural type. */
  private property(node: Extract<ExprNode, { kind: 'property' }>): string {
    const resolved = node.resolved;
    if (!resolved) throw new Error('unbound property');
    const [root, ...rest] = resolved.chain;
    let sql = this.propertyColumn(root!);
    let parent = root!;
    let fromJson = false;
    for (const p of rest) {
      if (parent.storage === 'columns') {
        sql = this.propertyColumn(p);
        fromJson = false;
      } else {
        fromJson = true;
        const key = quoteModelString(p.column);
        const field = `(${sql} -> ${key})`;
        const text = `(${sql} ->> ${key})`;
        switch (p.kind) {
          case 'complex':
            sql = field;
            break;
          case 'string':
            sql = `(CASE WHEN jsonb_typeof${field} = 'string' THEN ${text} END)`;
            break;
          case 'number':
            sql = `(CASE WHEN jsonb_typeof${field} = 'number' THEN CAST(${text} AS double precision) END)`;
            break;
          case 'integer':
          case 'datetime-ms':
            sql = `(CASE WHEN jsonb_typeof${field} = 'number' AND CAST(${text} AS numeric) = trunc(CAST(${text} AS numeric)) THEN trunc(CAST(${text} AS numeric)) END)`;
            break;
          case 'boolean':
            sql = `(CASE WHEN jsonb_typeof${field} = 'boolean' THEN CAST(${text} AS boolean) END)`;
            break;
          case 'guid':
            sql = `(CASE WHEN jsonb_typeof${field} = 'string' AND ${text} ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN CAST(${text} AS uuid) END)`;
            break;
          default:
            sql = field;
        }
      }
      parent = p;
    }
    return resolved.leaf.kind === 'number' && !fromJson ? `CAST(${sql} AS double precision)` : sql;
  }

  /** SQL of a value expression, converted to `as` (integer → double when `as` is decimal). */
  value(node: ExprNode, as: ValueType): string {
    const t = this.typeOf(node);
    if (t === 'boolean') return this.bool(node, 'definite');
    if (node.kind === 'literal') return this.literal(node, as);
    const sql = this.rawValue(node, t);
    return as === 'decimal' && t !== 'decimal' ? `CAST(${sql} AS double precision)` : sql;
  }

  private rawValue(node: ExprNode, t: ValueType): string {
    switch (node.kind) {
      case 'property':
        return this.property(node);
      case 'unary': {
        if (t === 'decimal') return `(- ${this.value(node.operand, 'decimal')})`;
        return `(- CAST(${this.value(node.operand, 'integer')} AS numeric))`;
      }
      case 'binary': {
        if (t === 'decimal') {
          const l = this.value(node.left, 'decimal');
          const r = this.value(node.right, 'decimal');
          switch (node.op) {
            case 'add':
              return `(${l} + ${r})`;
            case 'sub':
              return `(${l} - ${r})`;
            case 'mul':
              return `(${l} * ${r})`;
            case 'div':
              return `(${l} / NULLIF(${r}, 0))`;
            default:
              throw new Error(`unexpected decimal operator ${node.op}`);
          }
        }
        const l = `CAST(${this.value(node.left, 'integer')} AS numeric)`;
        const r = `CAST(${this.value(node.right, 'integer')} AS numeric)`;
        switch (node.op) {
          case 'add':
            return `(${l} + ${r})`;
          case 'sub':
            return `(${l} - ${r})`;
          case 'mul':
            return `(${l} * ${r})`;
          case 'div':
            return `div(${l}, NULLIF(${r}, 0))`;
          case 'mod':
            return `mod(${l}, NULLIF(${r}, 0))`;
          default:
            throw new Error(`unexpected integer operator ${node.op}`);
        }
      }
      case 'call':
        return this.call(node);
      default:
        throw new Error(`unexpected ${node.kind} as a value`);
    }
  }

  private str(node: ExprNode): string {
    return this.value(node, 'string');
  }

  private int(node: ExprNode): string {
    return `CAST(${this.value(node, 'integer')} AS numeric)`;
  }

  private call(node: Extract<ExprNode, { kind: 'call' }>): string {
    const [a, b, c] = node.args;
    switch (node.name) {
      case 'tolower':
      case 'toupper': {
        const fn = node.name === 'tolower' ? 'lower' : 'upper';
        return this.caseCollation
          ? `${fn}((${this.str(a!)}) COLLATE ${quoteIdentifier(this.caseCollation)})`
          : `${fn}(${this.str(a!)})`;
      }
      case 'trim':
        this.trimParam ??= this.param(TRIM_CHARACTERS);
        return `btrim(${this.str(a!)}, CAST(${this.trimParam} AS text))`;
      case 'concat':
        return `(${this.str(a!)} || ${this.str(b!)})`;
      case 'length':
        return `CAST(length(${this.str(a!)}) AS bigint)`;
      case 'indexof':
        return `(CAST(strpos(${this.str(a!)}, ${this.str(b!)}) AS bigint) - 1)`;
      case 'substring': {
        const o = this.subqueryAlias();
        if (!c) {
          return `(SELECT CASE WHEN ${o}.i IS NULL THEN NULL ELSE substr(${o}.s, CAST(LEAST(GREATEST(${o}.i, 0), 2000000000) AS integer) + 1) END FROM (SELECT ${this.str(a!)} AS s, ${this.int(b!)} AS i) AS ${o})`;
        }
        return (
          `(SELECT CASE WHEN ${o}.i IS NULL OR ${o}.n IS NULL THEN NULL ELSE substr(${o}.s, ` +
          `CAST(LEAST(GREATEST(${o}.i, 0), 2000000000) AS integer) + 1, ` +
          `CAST(LEAST(GREATEST(${o}.i + ${o}.n - GREATEST(${o}.i, 0), 0), 2000000000) AS integer)) END ` +
          `FROM (SELECT ${this.str(a!)} AS s, ${this.int(b!)} AS i, ${this.int(c)} AS n) AS ${o})`
        );
      }
      case 'hour':
        return `div(mod(mod(${this.int(a!)}, 86400000) + 86400000, 86400000), 3600000)`;
      case 'minute':
        return `div(mod(mod(${this.int(a!)}, 3600000) + 3600000, 3600000), 60000)`;
      case 'second':
        return `div(mod(mod(${this.int(a!)}, 60000) + 60000, 60000), 1000)`;
      case 'year':
      case 'month':
      case 'day':
        return this.civil(node.name, this.int(a!));
      default:
        throw new Error(`function ${node.name} is not a value`);
    }
  }

  /** Year / month / day of epoch milliseconds (Hinnant's civil_from_days, like calendar.ts). */
  private civil(part: 'year' | 'month' | 'day', ms: string): string {
    const q = this.subqueryAlias();
    const [a, b, cc, d, e, f, g, h] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((x) => `${q}${x}`);
    const result =
      part === 'year'
        ? `${e}.yoe + ${cc}.era * 400 + (CASE WHEN ${h}.m <= 2 THEN 1 ELSE 0 END)`
        : part === 'month'
          ? `${h}.m`
          : `${f}.doy - div(153 * ${g}.mp + 2, 5) + 1`;
    return (
      `(SELECT ${result} FROM (SELECT ${ms} AS ms) AS ${a}` +
      `, LATERAL (SELECT div(${a}.ms - mod(mod(${a}.ms, 86400000) + 86400000, 86400000), 86400000) + 719468 AS z) AS ${b}` +
      `, LATERAL (SELECT div(${b}.z - mod(mod(${b}.z, 146097) + 146097, 146097), 146097) AS era) AS ${cc}` +
      `, LATERAL (SELECT ${b}.z - ${cc}.era * 146097 AS doe) AS ${d}` +
      `, LATERAL (SELECT div(${d}.doe - div(${d}.doe, 1460) + div(${d}.doe, 36524) - div(${d}.doe, 146096), 365) AS yoe) AS ${e}` +
      `, LATERAL (SELECT ${d}.doe - (365 * ${e}.yoe + div(${e}.yoe, 4) - div(${e}.yoe, 100)) AS doy) AS ${f}` +
      `, LATERAL (SELECT div(5 * ${f}.doy + 2, 153) AS mp) AS ${g}` +
      `, LATERAL (SELECT CASE WHEN ${g}.mp < 10 THEN ${g}.mp + 3 ELSE ${g}.mp - 9 END AS m) AS ${h})`
    );
  }

  /**
   * Boolean expressions. In `truth` mode only "is it true" matters (WHERE, and/or below it), so a
   * null may stand for false; in `definite` mode (below `not`, as a compared value) comparisons
   * must yield false, never null, as OData defines them.
   */
  bool(node: ExprNode, mode: Mode): string {
    switch (node.kind) {
      case 'literal':
        return this.literal(node, 'boolean');
      case 'property':
        return this.property(node);
      case 'unary':
        if (node.op !== 'not') throw new Error('negation is not boolean');
        return `(NOT ${this.bool(node.operand, 'definite')})`;
      case 'in':
        return this.inList(node, mode);
      case 'call':
        return this.predicate(node);
      case 'binary':
        switch (node.op) {
          case 'and':
            return `(${this.bool(node.left, mode)} AND ${this.bool(node.right, mode)})`;
          case 'or':
            return `(${this.bool(node.left, mode)} OR ${this.bool(node.right, mode)})`;
          case 'eq':
          case 'ne':
          case 'gt':
          case 'ge':
          case 'lt':
          case 'le':
            return this.comparison(node, mode);
          default:
            throw new Error(`'${node.op}' is not boolean`);
        }
    }
  }

  private comparison(node: Extract<ExprNode, { kind: 'binary' }>, mode: Mode): string {
    const { op, left, right } = node;
    const common = commonType(this.typeOf(left), this.typeOf(right));
    const lNull = isNullLiteral(left);
    const rNull = isNullLiteral(right);
    if (op === 'eq' || op === 'ne') {
      if (lNull && rNull) return op === 'eq' ? 'TRUE' : 'FALSE';
      if (lNull || rNull) return `(${this.value(lNull ? right : left, common)} IS ${op === 'eq' ? '' : 'NOT '}NULL)`;
      const l = this.value(left, common);
      const r = this.value(right, common);
      if (op === 'ne') return `(${l} IS DISTINCT FROM ${r})`;
      if (left.kind === 'literal' || right.kind === 'literal')
        return mode === 'truth' ? `(${l} = ${r})` : `COALESCE(${l} = ${r}, FALSE)`;
      return `(${l} IS NOT DISTINCT FROM ${r})`;
    }
    if (lNull || rNull) return 'FALSE';
    let l = this.value(left, common);
    let r = this.value(right, common);
    if (common === 'string') {
      l = `(${l} COLLATE "C")`;
      r = `(${r} COLLATE "C")`;
    }
    const sqlOp = op === 'gt' ? '>' : op === 'ge' ? '>=' : op === 'lt' ? '<' : '<=';
    return mode === 'truth' ? `(${l} ${sqlOp} ${r})` : `COALESCE(${l} ${sqlOp} ${r}, FALSE)`;
  }

  private inList(node: Extract<ExprNode, { kind: 'in' }>, mode: Mode): string {
    if (!node.list) throw new Error("'in' needs a literal list");
    let common = this.typeOf(node.operand);
    for (const item of node.list) {
      const t = this.typeOf(item);
      if (t !== 'null') common = common === 'null' ? t : commonType(common, t);
    }
    if (common === 'null') common = 'string';
    const nonNull = node.list.filter((i) => i.value !== null);
    const hasNull = nonNull.length < node.list.length;
    if (node.list.length === 0) return 'FALSE';
    const operand = this.value(node.operand, common);
    if (nonNull.length === 0) return `(${operand} IS NULL)`;
    const items = nonNull.map((i) => this.literal(i, common)).join(', ');
    if (hasNull) {
      const o = this.subqueryAlias();
      return `(SELECT (${o}.v IS NULL OR ${o}.v IN (${items})) FROM (SELECT ${operand} AS v) AS ${o})`;
    }
    return mode === 'truth' ? `(${operand} IN (${items}))` : `COALESCE(${operand} IN (${items}), FALSE)`;
  }

  /** contains / startswith / endswith: LIKE with an escaped bound pattern, or strpos/starts_with. */
  private predicate(node: Extract<ExprNode, { kind: 'call' }>): string {
    const [a, b] = node.args;
    const subject = this.str(a!);
    if (isNullLiteral(b!)) return 'CAST(NULL AS boolean)';
    if (b!.kind === 'literal') {
      const escaped = String(b!.value).replace(/[\\%_]/g, (ch) => `\\${ch}`);
      const pattern =
        node.name === 'contains' ? `%${escaped}%` : node.name === 'startswith' ? `${escaped}%` : `%${escaped}`;
      return `(${subject} LIKE CAST(${this.param(pattern)} AS text) ESCAPE E'\\\\')`;
    }
    const needle = this.str(b!);
    switch (node.name) {
      case 'contains':
        return `(strpos(${subject}, ${needle}) > 0)`;
      case 'startswith':
        return `starts_with(${subject}, ${needle})`;
      case 'endswith':
        return `starts_with(reverse(${subject}), reverse(${needle}))`;
      default:
        throw new Error(`function ${node.name} is not boolean`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Query builder integration
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Loading plain records by model, and $expand
// ---------------------------------------------------------------------------------------------

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
      const n = Number(v);
      return Number.isFinite(n) ? n : v;
    }
    default:
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

type Rec = Record<string, unknown>;
type QueryRunnerSource = Pick<DataSource, 'createQueryBuilder'> | Pick<EntityManager, 'createQueryBuilder'>;

function keyOf(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  return typeof v === 'string' ? v.toLowerCase() : String(v);
}

/** Applies nested $filter / $orderby / $skip / $top to one collection, returning page and count. */
function pageCollection(children: Rec[], options: ExpandOptions, model: EntityModel): { page: Rec[]; count: number } {
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
  records: Rec[],
  expand: readonly ExpandItem[],
  model: EntityModel,
  options: ExpandRecordsOptions = {},
): Promise<void> {
  for (const item of expand) {
    const nav = item.navigation;
    if (!nav) throw new Error('expandRecords needs a bound query (parseQueryOptions with an entity model)');
    const target = nav.target;
    const opts = item.options;
    const allChildren: Rec[] = [];
    const relation = nav.relation;
    if (relation.kind === 'jsonb') {
      const from = relation.property ?? nav.name;
      for (const record of records) {
        const stored = record[from];
        if (nav.many) {
          const list = Array.isArray(stored)
            ? (stored.filter((c) => c !== null && typeof c === 'object') as Rec[])
            : [];
          const { page, count } = pageCollection(list, opts, target);
          record[nav.name] = page;
          if (opts.count) record[`${nav.name}@odata.count`] = count;
          allChildren.push(...page);
        } else {
          const child =
            stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Rec) : null;
          record[nav.name] = child;
          if (child) allChildren.push(child);
        }
      }
    } else {
      const localKey = model.property(relation.localKey);
      const foreignKey = target.property(relation.foreignKey);
      if (!localKey || !foreignKey) throw new Error(`Navigation ${nav.name}: key properties not found`);
      if (!target.table) throw new Error(`Navigation ${nav.name}: target model ${target.name} has no table`);
      const keys = new Map<string, unknown>();
      for (const r of records) {
        const k = keyOf(r[localKey.name]);
        if (k !== undefined) keys.set(k, r[localKey.name]);
      }
      const groups = new Map<string, Rec[]>();
      if (keys.size > 0) {
        const alias = '_odx';
        const qb = source.createQueryBuilder().from(target.table, alias);
        const toRecord = selectModelRecords(qb, target, alias);
        const compiler = new SqlCompiler(alias, new Set(), options);
        const fk = compiler.propertyColumn(foreignKey);
        const placeholders = [...keys.values()].map((v) => compiler.param(v));
        qb.where(`(${fk} IN (${placeholders.join(', ')}))`);
        qb.setParameters(compiler.parameters);
        if (opts.filter) applyODataFilter(qb, opts.filter, target, alias, options);
        if (nav.many) applyODataOrderBy(qb, opts.orderBy, target, alias, options);
        const maxRows = options.maxRows ?? 10_000;
        qb.limit(maxRows + 1);
        const rows = (await qb.getRawMany()) as Rec[];
        if (rows.length > maxRows) {
          throw new ODataError(
            'QueryLimitExceeded',
            '$expand',
            `expanding ${nav.name} would load more than ${maxRows} records; add $filter or $top`,
          );
        }
        for (const raw of rows) {
          const child = toRecord(raw);
          const k = keyOf(child[foreignKey.name]);
          if (k === undefined) continue;
          let list = groups.get(k);
          if (!list) groups.set(k, (list = []));
          list.push(child);
        }
      }
      for (const record of records) {
        const k = keyOf(record[localKey.name]);
        const children = (k !== undefined && groups.get(k)) || [];
        if (nav.many) {
          const skip = opts.skip ?? 0;
          const page = opts.top === undefined ? children.slice(skip) : children.slice(skip, skip + opts.top);
          record[nav.name] = page;
          if (opts.count) record[`${nav.name}@odata.count`] = children.length;
          allChildren.push(...page);
        } else {
          record[nav.name] = children[0] ?? null;
          if (children[0]) allChildren.push(children[0]);
        }
      }
    }
    if (opts.expand.length > 0 && allChildren.length > 0)
      await expandRecords(source, allChildren, opts.expand, target, options);
  }
}
