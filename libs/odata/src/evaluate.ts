/**
 * In-memory evaluator with the same semantics as the SQL translator:
 * - integers (int64, dates as epoch ms) are exact bigints; `div` truncates toward zero and `mod`
 *   takes the sign of the dividend (PostgreSQL `div`/`mod` on numeric); decimals are IEEE doubles;
 *   an integer meeting a decimal becomes a double; division or modulo by zero yields null;
 * - `eq`/`ne` are null-safe (`null eq null` is true); `gt ge lt le` with a null operand are false;
 *   `and`/`or`/`not` use three-valued logic (null = unknown); functions of null are null;
 * - strings compare by Unicode code point (PostgreSQL `COLLATE "C"` on UTF-8); `length`,
 *   `indexof` and `substring` count code points; `tolower`/`toupper` use full Unicode case mapping
 *   (PostgreSQL ICU `und` collation); `trim` strips JavaScript white space.
 */
import type { ExprNode, LiteralNode, OrderByItem, PropertyNode } from './ast.js';
import { datePart } from './calendar.js';
import type { PropertyKind } from './model.js';

const GUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type EvalValue = null | boolean | string | bigint | number;

export type Row = Readonly<Record<string, unknown>>;

/** Integers are numbers (integral) or bigints; anything else (e.g. a JSON string "7") is null, as in SQL. */
function toBigInt(v: unknown): bigint | null {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : null;
  return null;
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  return null;
}

/**
 * Converts a record value to the evaluator's representation for a property kind. Records hold
 * JSON-like values: numbers for int64 and decimals (see selectModelRecords), strings, booleans.
 */
export function fromStored(kind: PropertyKind | undefined, v: unknown): EvalValue {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'string':
      return typeof v === 'string' ? v : null;
    case 'number':
      return toNumber(v);
    case 'integer':
    case 'datetime-ms':
      return toBigInt(v);
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'guid':
      return typeof v === 'string' && GUID_TEXT.test(v) ? v.toLowerCase() : null;
    case undefined:
      // Unbound tree: best effort from the JavaScript type.
      if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
      if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return v;
      return null;
    case 'string-array':
    case 'complex':
      return null;
  }
}

function readPath(row: Row, path: readonly string[]): unknown {
  let current: unknown = row;
  for (const seg of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return null;
    current = Object.hasOwn(current, seg) ? (current as Record<string, unknown>)[seg] : null;
  }
  return current;
}

function readProperty(node: PropertyNode, row: Row): EvalValue {
  return fromStored(node.resolved?.leaf.kind, readPath(row, node.path));
}

function literalValue(node: LiteralNode): EvalValue {
  return node.value;
}

/** Code-point order (= UTF-8 byte order). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Compares two non-null values of comparable types; undefined when the types do not compare. */
export function compareValues(a: Exclude<EvalValue, null>, b: Exclude<EvalValue, null>): number | undefined {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  return undefined;
}

function equals(a: EvalValue, b: EvalValue): boolean {
  if (a === null || b === null) return a === null && b === null;
  return compareValues(a, b) === 0;
}

function arithmetic(op: string, a: EvalValue, b: EvalValue): EvalValue {
  if (a === null || b === null) return null;
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    switch (op) {
      case 'add':
        return a + b;
      case 'sub':
        return a - b;
      case 'mul':
        return a * b;
      case 'div':
        return b === 0n ? null : a / b;
      default:
        return b === 0n ? null : a % b;
    }
  }
  const x = toNumber(a);
  const y = toNumber(b);
  if (x === null || y === null) return null;
  switch (op) {
    case 'add':
      return x + y;
    case 'sub':
      return x - y;
    case 'mul':
      return x * y;
    case 'div':
      return y === 0 ? null : x / y;
    default:
      return y === 0 ? null : x % y;
  }
}

/** The characters JavaScript's String.prototype.trim removes (also bound for SQL `btrim`). */
export const TRIM_CHARACTERS =
  '\u0009\u000A\u000B\u000C\u000D\u0020\u00A0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF';

function codePoints(s: string): string[] {
  return Array.from(s);
}

function substring(s: string, start: bigint, length: bigint | undefined): string {
  const cps = codePoints(s);
  const n = BigInt(cps.length);
  const from = start < 0n ? 0n : start;
  if (length === undefined) return from >= n ? '' : cps.slice(Number(from)).join('');
  const to = start + length;
  if (to <= from || from >= n) return '';
  return cps.slice(Number(from), Number(to < n ? to : n)).join('');
}

function callFunction(name: string, args: EvalValue[]): EvalValue {
  if (args.some((a) => a === null)) return null;
  const s = (i: number) => args[i] as string;
  const i64 = (i: number) => args[i] as bigint;
  switch (name) {
    case 'contains':
      return s(0).includes(s(1));
    case 'startswith':
      return s(0).startsWith(s(1));
    case 'endswith':
      return s(0).endsWith(s(1));
    case 'tolower':
      return s(0).toLowerCase();
    case 'toupper':
      return s(0).toUpperCase();
    case 'trim':
      return s(0).trim();
    case 'concat':
      return s(0) + s(1);
    case 'length':
      return BigInt(codePoints(s(0)).length);
    case 'indexof': {
      const idx = s(0).indexOf(s(1));
      return idx < 0 ? -1n : BigInt(codePoints(s(0).slice(0, idx)).length);
    }
    case 'substring':
      return substring(s(0), i64(1), args.length > 2 ? i64(2) : undefined);
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'minute':
    case 'second':
      return datePart(name, i64(0));
    default:
      throw new Error(`unknown function ${name}`);
  }
}

/** Evaluates an expression tree (normally bound by parseQueryOptions) against one record. */
export function evaluate(node: ExprNode, row: Row): EvalValue {
  switch (node.kind) {
    case 'literal':
      return literalValue(node);
    case 'property':
      return readProperty(node, row);
    case 'unary': {
      const v = evaluate(node.operand, row);
      if (v === null) return null;
      if (node.op === 'not') return !v;
      return typeof v === 'bigint' ? -v : -(v as number);
    }
    case 'in': {
      const v = evaluate(node.operand, row);
      if (!node.list) throw new Error("'in' with a non-list operand cannot be evaluated");
      return node.list.some((item) => equals(v, literalValue(item)));
    }
    case 'call':
      return callFunction(
        node.name,
        node.args.map((a) => evaluate(a, row)),
      );
    case 'binary': {
      switch (node.op) {
        case 'and': {
          const l = evaluate(node.left, row);
          if (l === false) return false;
          const r = evaluate(node.right, row);
          if (r === false) return false;
          return l === null || r === null ? null : true;
        }
        case 'or': {
          const l = evaluate(node.left, row);
          if (l === true) return true;
          const r = evaluate(node.right, row);
          if (r === true) return true;
          return l === null || r === null ? null : false;
        }
        case 'eq':
          return equals(evaluate(node.left, row), evaluate(node.right, row));
        case 'ne':
          return !equals(evaluate(node.left, row), evaluate(node.right, row));
        case 'gt':
        case 'ge':
        case 'lt':
        case 'le': {
          const l = evaluate(node.left, row);
          const r = evaluate(node.right, row);
          if (l === null || r === null) return false;
          const c = compareValues(l, r);
          if (c === undefined) return false;
          return node.op === 'gt' ? c > 0 : node.op === 'ge' ? c >= 0 : node.op === 'lt' ? c < 0 : c <= 0;
        }
        case 'add':
        case 'sub':
        case 'mul':
        case 'div':
        case 'mod':
          return arithmetic(node.op, evaluate(node.left, row), evaluate(node.right, row));
      }
    }
  }
}

/** True when the filter selects the record (null and false both exclude it). */
export function matches(filter: ExprNode | undefined, row: Row): boolean {
  return filter === undefined || evaluate(filter, row) === true;
}

/**
 * Sorts records like the SQL translator orders rows: each item ascending or descending, nulls
 * first when ascending and last when descending, then by `key` in the direction of the last item. Returns a new array.
 */
/** The key tiebreak follows the direction of the last `$orderby` item (ascending without one). */
export function tiebreakDescending(orderBy: readonly OrderByItem[]): boolean {
  return orderBy.at(-1)?.direction === 'desc';
}

export function sortRecords<T extends Row>(
  records: readonly T[],
  orderBy: readonly OrderByItem[],
  key?: (row: T) => EvalValue,
): T[] {
  const decorated = records.map((row, index) => ({
    row,
    index,
    keys: orderBy.map((o) => evaluate(o.expr, row)),
    tiebreak: key ? key(row) : null,
  }));
  const cmp = (a: EvalValue, b: EvalValue, desc: boolean): number => {
    if (a === null || b === null) {
      if (a === null && b === null) return 0;
      const nullFirst = a === null ? -1 : 1;
      return desc ? -nullFirst : nullFirst;
    }
    const c = compareValues(a, b) ?? 0;
    return desc ? -c : c;
  };
  decorated.sort((x, y) => {
    for (let i = 0; i < orderBy.length; i++) {
      const c = cmp(x.keys[i]!, y.keys[i]!, orderBy[i]!.direction === 'desc');
      if (c !== 0) return c;
    }
    const t = cmp(x.tiebreak, y.tiebreak, tiebreakDescending(orderBy));
    return t !== 0 ? t : x.index - y.index;
  });
  return decorated.map((d) => d.row);
}
