/**
 * Compiles bound expression trees to PostgreSQL with every literal bound as a parameter; the
 * guarantees and the one known difference from `evaluate()` are in the README ("SQL translation").
 */
import type { ArithmeticOperator, ExprNode, FunctionName, LiteralNode, ValueType } from './ast.js';
import { ARITHMETIC_OPERATORS } from './ast.js';
import { isNumeric } from './binder.js';
import { TRIM_CHARACTERS } from './evaluate.js';
import type { PropertyModel } from './model.js';
import { civilPartSql } from './sql-calendar.js';

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
const GUID_PATTERN = "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'";
const PREDICATES = ['contains', 'startswith', 'endswith'] as const;
type PredicateName = (typeof PREDICATES)[number];

function arithmeticOperator(node: Extract<ExprNode, { kind: 'binary' }>): ArithmeticOperator {
  const op = ARITHMETIC_OPERATORS.find((candidate) => candidate === node.op);
  if (!op) throw new Error(`unexpected operator ${node.op} in a value`);
  return op;
}

function predicateName(name: FunctionName): PredicateName {
  const predicate = PREDICATES.find((candidate) => candidate === name);
  if (!predicate) throw new Error(`function ${name} is not boolean`);
  return predicate;
}

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
    case 'string':
    case 'null':
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
      case 'null':
      case undefined:
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
          case 'string-array':
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
            sql =
              `(CASE WHEN jsonb_typeof${field} = 'number' AND CAST(${text} AS numeric) = ` +
              `trunc(CAST(${text} AS numeric)) THEN trunc(CAST(${text} AS numeric)) END)`;
            break;
          case 'boolean':
            sql = `(CASE WHEN jsonb_typeof${field} = 'boolean' THEN CAST(${text} AS boolean) END)`;
            break;
          case 'guid':
            sql = `(CASE WHEN jsonb_typeof${field} = 'string' AND ${text} ~* ${GUID_PATTERN} THEN CAST(${text} AS uuid) END)`;
            break;
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
      case 'binary':
        return this.arithmetic(node, t);
      case 'call':
        return this.call(node);
      case 'in':
      case 'literal':
        throw new Error(`unexpected ${node.kind} as a value`);
    }
  }

  private arithmetic(node: Extract<ExprNode, { kind: 'binary' }>, t: ValueType): string {
    const op = arithmeticOperator(node);
    if (t === 'decimal') {
      const left = this.value(node.left, 'decimal');
      const right = this.value(node.right, 'decimal');
      switch (op) {
        case 'add':
          return `(${left} + ${right})`;
        case 'sub':
          return `(${left} - ${right})`;
        case 'mul':
          return `(${left} * ${right})`;
        case 'div':
          return `(${left} / NULLIF(${right}, 0))`;
        case 'mod':
          throw new Error(`unexpected decimal operator ${op}`);
      }
    }
    const left = `CAST(${this.value(node.left, 'integer')} AS numeric)`;
    const right = `CAST(${this.value(node.right, 'integer')} AS numeric)`;
    switch (op) {
      case 'add':
        return `(${left} + ${right})`;
      case 'sub':
        return `(${left} - ${right})`;
      case 'mul':
        return `(${left} * ${right})`;
      case 'div':
        return `div(${left}, NULLIF(${right}, 0))`;
      case 'mod':
        return `mod(${left}, NULLIF(${right}, 0))`;
    }
  }

  private str(node: ExprNode): string {
    return this.value(node, 'string');
  }

  private int(node: ExprNode): string {
    return `CAST(${this.value(node, 'integer')} AS numeric)`;
  }

  private call(node: Extract<ExprNode, { kind: 'call' }>): string {
    const [first, second, third] = node.args;
    switch (node.name) {
      case 'tolower':
      case 'toupper': {
        const fn = node.name === 'tolower' ? 'lower' : 'upper';
        return this.caseCollation
          ? `${fn}((${this.str(first!)}) COLLATE ${quoteIdentifier(this.caseCollation)})`
          : `${fn}(${this.str(first!)})`;
      }
      case 'trim':
        this.trimParam ??= this.param(TRIM_CHARACTERS);
        return `btrim(${this.str(first!)}, CAST(${this.trimParam} AS text))`;
      case 'concat':
        return `(${this.str(first!)} || ${this.str(second!)})`;
      case 'length':
        return `CAST(length(${this.str(first!)}) AS bigint)`;
      case 'indexof':
        return `(CAST(strpos(${this.str(first!)}, ${this.str(second!)}) AS bigint) - 1)`;
      case 'substring':
        return this.substring(first!, second!, third);
      case 'hour':
        return `div(mod(mod(${this.int(first!)}, 86400000) + 86400000, 86400000), 3600000)`;
      case 'minute':
        return `div(mod(mod(${this.int(first!)}, 3600000) + 3600000, 3600000), 60000)`;
      case 'second':
        return `div(mod(mod(${this.int(first!)}, 60000) + 60000, 60000), 1000)`;
      case 'year':
      case 'month':
      case 'day':
        return civilPartSql(node.name, this.int(first!), this.subqueryAlias());
      case 'contains':
      case 'startswith':
      case 'endswith':
        throw new Error(`function ${node.name} is not a value`);
    }
  }

  /** Code-point `substring` with OData's clamping of start and length. */
  private substring(text: ExprNode, start: ExprNode, length: ExprNode | undefined): string {
    const sub = this.subqueryAlias();
    const from = `CAST(LEAST(GREATEST(${sub}.i, 0), 2000000000) AS integer) + 1`;
    if (!length) {
      return (
        `(SELECT CASE WHEN ${sub}.i IS NULL THEN NULL ELSE substr(${sub}.s, ${from}) END ` +
        `FROM (SELECT ${this.str(text)} AS s, ${this.int(start)} AS i) AS ${sub})`
      );
    }
    return (
      `(SELECT CASE WHEN ${sub}.i IS NULL OR ${sub}.n IS NULL THEN NULL ELSE substr(${sub}.s, ${from}, ` +
      `CAST(LEAST(GREATEST(${sub}.i + ${sub}.n - GREATEST(${sub}.i, 0), 0), 2000000000) AS integer)) END ` +
      `FROM (SELECT ${this.str(text)} AS s, ${this.int(start)} AS i, ${this.int(length)} AS n) AS ${sub})`
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
          case 'add':
          case 'sub':
          case 'mul':
          case 'div':
          case 'mod':
            throw new Error(`'${node.op}' is not boolean`);
        }
    }
  }

  private comparison(node: Extract<ExprNode, { kind: 'binary' }>, mode: Mode): string {
    const { op, left, right } = node;
    const common = commonType(this.typeOf(left), this.typeOf(right));
    const leftNull = isNullLiteral(left);
    const rightNull = isNullLiteral(right);
    if (op === 'eq' || op === 'ne') {
      if (leftNull && rightNull) return op === 'eq' ? 'TRUE' : 'FALSE';
      if (leftNull || rightNull)
        return `(${this.value(leftNull ? right : left, common)} IS ${op === 'eq' ? '' : 'NOT '}NULL)`;
      const l = this.value(left, common);
      const r = this.value(right, common);
      if (op === 'ne') return `(${l} IS DISTINCT FROM ${r})`;
      if (left.kind === 'literal' || right.kind === 'literal')
        return mode === 'truth' ? `(${l} = ${r})` : `COALESCE(${l} = ${r}, FALSE)`;
      return `(${l} IS NOT DISTINCT FROM ${r})`;
    }
    if (leftNull || rightNull) return 'FALSE';
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
      const sub = this.subqueryAlias();
      return `(SELECT (${sub}.v IS NULL OR ${sub}.v IN (${items})) FROM (SELECT ${operand} AS v) AS ${sub})`;
    }
    return mode === 'truth' ? `(${operand} IN (${items}))` : `COALESCE(${operand} IN (${items}), FALSE)`;
  }

  /** contains / startswith / endswith: LIKE with an escaped bound pattern, or strpos/starts_with. */
  private predicate(node: Extract<ExprNode, { kind: 'call' }>): string {
    const name = predicateName(node.name);
    const [haystack, searched] = node.args;
    const subject = this.str(haystack!);
    if (isNullLiteral(searched!)) return 'CAST(NULL AS boolean)';
    if (searched!.kind === 'literal') {
      const escaped = String(searched!.value).replace(/[\\%_]/g, (ch) => `\\${ch}`);
      const pattern = name === 'contains' ? `%${escaped}%` : name === 'startswith' ? `${escaped}%` : `%${escaped}`;
      return `(${subject} LIKE CAST(${this.param(pattern)} AS text) ESCAPE E'\\\\')`;
    }
    const needle = this.str(searched!);
    switch (name) {
      case 'contains':
        return `(strpos(${subject}, ${needle}) > 0)`;
      case 'startswith':
        return `starts_with(${subject}, ${needle})`;
      case 'endswith':
        return `starts_with(reverse(${subject}), reverse(${needle}))`;
    }
  }
}
