/**
 * The query-options entry point: `$filter`, `$orderby`, `$select`, `$expand`, `$top`, `$skip`,
 * `$count`, parsed and validated against an entity model into one typed `ODataQuery`.
 */
import type { ExprNode, ODataQuery, OrderByItem, SelectItem } from './ast.js';
import { ODataError, quoteForMessage } from './errors.js';
import { Lexer } from './lexer.js';
import type { EntityModel } from './model.js';
import {
  bindExpand,
  bindFilter,
  bindOrderBy,
  bindSelect,
  unboundExpand,
  type RawExpandItem,
  type RawOptions,
} from './option-binding.js';
import { describeAt, findClose, splitTopLevel, starOrPathPattern } from './option-scan.js';
import { ExpressionParser } from './parser.js';

export interface QueryLimits {
  /** Nodes in a `$filter` tree (and in all `$orderby` items together). Contract: 100. */
  maxFilterNodes: number;
  /** Items in `$orderby`. Contract: 5. */
  maxOrderByItems: number;
  /** `$expand` depth, nested `$expand` options included. Contract: 2. */
  maxExpandDepth: number;
  /** Largest `$top`. Contract: 1000. */
  maxTop: number;
  /** Page size when `$top` is absent. Contract: 100. */
  defaultTop: number;
  /** Largest `$skip` (int32). */
  maxSkip: number;
  /** Nesting of parentheses / function calls inside one expression. */
  maxNestingDepth: number;
  /** Characters in one option value (after URL decoding). */
  maxOptionLength: number;
}

export const DEFAULT_QUERY_LIMITS: Readonly<QueryLimits> = Object.freeze({
  maxFilterNodes: 100,
  maxOrderByItems: 5,
  maxExpandDepth: 2,
  maxTop: 1000,
  defaultTop: 100,
  maxSkip: 2_147_483_647,
  maxNestingDepth: 100,
  maxOptionLength: 8192,
});

export interface ParseQueryOptions {
  limits?: Partial<QueryLimits>;
}

/** Query parameters as a framework hands them over (repeated parameters may arrive as arrays). */
export type QueryParams = Record<string, string | readonly string[] | undefined>;

const SUPPORTED = ['$filter', '$orderby', '$select', '$expand', '$top', '$skip', '$count'] as const;
type OptionName = (typeof SUPPORTED)[number];

const NESTED_SUPPORTED: readonly OptionName[] = [
  '$filter',
  '$orderby',
  '$select',
  '$expand',
  '$top',
  '$skip',
  '$count',
];

const KNOWN_UNSUPPORTED: Record<string, string> = {
  $search: '$search is not supported',
  $apply: '$apply (aggregation) is not supported',
  $compute: '$compute (OData 4.01) is not supported',
  $format: '$format is not supported; the response format is JSON',
  $levels: '$levels is not supported',
  $skiptoken: '$skiptoken is not supported; use $skip',
  $deltatoken: '$deltatoken is not supported',
  $index: '$index is not supported',
  $schemaversion: '$schemaversion is not supported',
  $id: '$id is not supported',
};

// ---------------------------------------------------------------------------------------------
// Raw (syntax-level) parsing
// ---------------------------------------------------------------------------------------------

function syntaxError(target: string, pos: number, message: string): ODataError {
  return new ODataError('QuerySyntaxError', target, `Syntax error in ${target} at position ${pos}: ${message}`, {
    position: pos,
  });
}

class OptionParser {
  constructor(
    private readonly limits: QueryLimits,
    /** Error target: the top-level option (`$expand` for everything nested in it). */
    private readonly target: string,
  ) {}

  filter(text: string, base: number, what: string): ExprNode {
    const parser = new ExpressionParser(
      new Lexer(text, this.target, base),
      { maxNodes: this.limits.maxFilterNodes, maxDepth: this.limits.maxNestingDepth },
      what,
    );
    return parser.parseFilter();
  }

  orderBy(text: string, base: number, what: string): OrderByItem[] {
    const parser = new ExpressionParser(
      new Lexer(text, this.target, base),
      { maxNodes: this.limits.maxFilterNodes, maxDepth: this.limits.maxNestingDepth },
      what,
    );
    return parser.parseOrderBy(this.limits.maxOrderByItems);
  }

  select(text: string, base: number): SelectItem[] {
    const items: SelectItem[] = [];
    if (text === '') throw syntaxError(this.target, base, 'empty $select');
    const re = starOrPathPattern();
    let pos = 0;
    for (;;) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m)
        throw syntaxError(
          this.target,
          base + pos,
          `expected a property name or '*' in $select, found ${describeAt(text, pos)}`,
        );
      const item = m[0];
      pos += item.length;
      items.push(item === '*' ? { kind: 'star' } : { kind: 'path', path: item.split('/') });
      if (pos === text.length) return items;
      const c = text[pos];
      if (c === ',') {
        pos++;
        continue;
      }
      if (c === '(')
        throw syntaxError(this.target, base + pos, 'nested options inside $select (OData 4.01) are not supported');
      if (c === '.')
        throw syntaxError(
          this.target,
          base + pos,
          'qualified names (type casts, operations) are not supported in $select',
        );
      if (c === '/' && text[pos + 1] === '*')
        throw syntaxError(this.target, base + pos, "'/*' in $select is not supported");
      throw syntaxError(this.target, base + pos, `expected ',' or the end of $select, found ${describeAt(text, pos)}`);
    }
  }

  expand(text: string, base: number, depth: number): RawExpandItem[] {
    if (depth > this.limits.maxExpandDepth) {
      throw new ODataError(
        'QueryLimitExceeded',
        '$expand',
        `$expand is nested deeper than ${this.limits.maxExpandDepth} levels`,
      );
    }
    if (text === '') throw syntaxError(this.target, base, 'empty $expand');
    const items: RawExpandItem[] = [];
    const re = starOrPathPattern();
    let pos = 0;
    for (;;) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m)
        throw syntaxError(
          this.target,
          base + pos,
          `expected a navigation property or '*' in $expand, found ${describeAt(text, pos)}`,
        );
      const itemPos = pos;
      const path = m[0] === '*' ? ['*'] : m[0].split('/');
      pos += m[0].length;
      let options: RawOptions = { orderBy: [], expand: [] };
      const c = text[pos];
      if (c === '/')
        throw syntaxError(
          this.target,
          base + pos,
          `'${text.slice(pos, pos + 7)}...': $ref, $count, type casts and '*' segments in $expand are not supported`,
        );
      if (c === '.')
        throw syntaxError(this.target, base + pos, 'qualified names (type casts) are not supported in $expand');
      if (c === '(') {
        if (path[0] === '*') throw syntaxError(this.target, base + pos, "options on '*' are not supported");
        const close = findClose(text, pos, (p, msg) => syntaxError(this.target, base + p, msg));
        options = this.nested(text.slice(pos + 1, close), base + pos + 1, depth, path.join('/'));
        pos = close + 1;
      }
      items.push({ path, pos: base + itemPos, options });
      if (pos === text.length) return items;
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      throw syntaxError(this.target, base + pos, `expected ',' or the end of $expand, found ${describeAt(text, pos)}`);
    }
  }

  /** `$select=...;$filter=...` inside the parentheses of an expanded navigation property. */
  private nested(text: string, base: number, depth: number, navigation: string): RawOptions {
    const out: RawOptions = { orderBy: [], expand: [] };
    if (text === '') throw syntaxError(this.target, base, `empty options for ${quoteForMessage(navigation)}`);
    const seen = new Set<string>();
    for (const seg of splitTopLevel(text, ';')) {
      const at = base + seg.start;
      const eq = seg.text.indexOf('=');
      const rawName = eq < 0 ? seg.text : seg.text.slice(0, eq);
      if (eq < 0)
        throw syntaxError(
          this.target,
          at,
          `expected '$option=value' inside $expand, found ${quoteForMessage(seg.text)}`,
        );
      const name = rawName.toLowerCase();
      if (name.startsWith('@')) throw syntaxError(this.target, at, 'parameter aliases are not supported');
      if (!name.startsWith('$'))
        throw syntaxError(this.target, at, `system query options need the '$' prefix: ${quoteForMessage(rawName)}`);
      if (KNOWN_UNSUPPORTED[name]) throw syntaxError(this.target, at, KNOWN_UNSUPPORTED[name]!);
      if (!(NESTED_SUPPORTED as readonly string[]).includes(name))
        throw syntaxError(this.target, at, `unknown option ${quoteForMessage(rawName)} inside $expand`);
      if (seen.has(name)) throw syntaxError(this.target, at, `${name} given twice for ${quoteForMessage(navigation)}`);
      seen.add(name);
      const value = seg.text.slice(eq + 1);
      const vbase = at + eq + 1;
      const what = `${name} in $expand of ${quoteForMessage(navigation)}`;
      switch (name as OptionName) {
        case '$filter':
          out.filter = this.filter(value, vbase, what);
          break;
        case '$orderby':
          out.orderBy = this.orderBy(value, vbase, what);
          break;
        case '$select':
          out.select = this.select(value, vbase);
          break;
        case '$expand':
          out.expand = this.expand(value, vbase, depth + 1);
          break;
        case '$top':
          out.top = parseTop(value, this.target, vbase, this.limits);
          break;
        case '$skip':
          out.skip = parseSkip(value, this.target, vbase, this.limits);
          break;
        case '$count':
          out.count = parseCount(value, this.target, vbase);
          break;
      }
    }
    return out;
  }
}

function parseNonNegative(value: string, target: string, base: number, name: string): bigint {
  if (!/^\d+$/.test(value))
    throw syntaxError(target, base, `${name} must be a non-negative integer, found ${quoteForMessage(value)}`);
  return BigInt(value);
}

function parseTop(value: string, target: string, base: number, limits: QueryLimits): number {
  const n = parseNonNegative(value, target, base, '$top');
  if (n > BigInt(limits.maxTop))
    throw new ODataError('QueryLimitExceeded', target, `$top must be at most ${limits.maxTop}`);
  return Number(n);
}

function parseSkip(value: string, target: string, base: number, limits: QueryLimits): number {
  const n = parseNonNegative(value, target, base, '$skip');
  if (n > BigInt(limits.maxSkip))
    throw new ODataError('ValidationFailed', target, `$skip must be at most ${limits.maxSkip}`);
  return Number(n);
}

function parseCount(value: string, target: string, base: number): boolean {
  const v = value.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw syntaxError(target, base, `$count must be true or false, found ${quoteForMessage(value)}`);
}

/** Collects the `$`-options of a query (case-insensitive names), rejecting unknown and repeated ones. */
function collectOptions(query: QueryParams, limits: QueryLimits): Map<OptionName, string> {
  const found = new Map<OptionName, string>();
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('$') || raw === undefined) continue;
    const name = key.toLowerCase();
    if (!(SUPPORTED as readonly string[]).includes(name)) {
      const shown = quoteForMessage(key);
      throw new ODataError('QuerySyntaxError', key, KNOWN_UNSUPPORTED[name] ?? `Unknown query option ${shown}`);
    }
    const option = name as OptionName;
    if (found.has(option) || typeof raw !== 'string') {
      throw new ODataError('QuerySyntaxError', option, `Query option ${option} is given more than once`);
    }
    if (raw.length > limits.maxOptionLength) {
      throw new ODataError(
        'QueryLimitExceeded',
        option,
        `${option} is longer than ${limits.maxOptionLength} characters`,
      );
    }
    found.set(option, raw);
  }
  return found;
}

function parseRaw(query: QueryParams, limits: QueryLimits): RawOptions {
  const options = collectOptions(query, limits);
  const out: RawOptions = { orderBy: [], expand: [] };
  for (const [name, value] of options) {
    const p = new OptionParser(limits, name);
    switch (name) {
      case '$filter':
        out.filter = p.filter(value, 0, '$filter');
        break;
      case '$orderby':
        out.orderBy = p.orderBy(value, 0, '$orderby');
        break;
      case '$select':
        out.select = p.select(value, 0);
        break;
      case '$expand':
        out.expand = p.expand(value, 0, 1);
        break;
      case '$top':
        out.top = parseTop(value, name, 0, limits);
        break;
      case '$skip':
        out.skip = parseSkip(value, name, 0, limits);
        break;
      case '$count':
        out.count = parseCount(value, name, 0);
        break;
    }
  }
  return out;
}

function finish(
  raw: RawOptions,
  limits: QueryLimits,
  parts: Pick<ODataQuery, 'orderBy' | 'expand'> & { filter?: ExprNode; select?: SelectItem[] },
): ODataQuery {
  return {
    ...(parts.filter ? { filter: parts.filter } : {}),
    orderBy: parts.orderBy,
    ...(parts.select ? { select: parts.select } : {}),
    expand: parts.expand,
    top: raw.top ?? limits.defaultTop,
    topExplicit: raw.top !== undefined,
    skip: raw.skip ?? 0,
    count: raw.count ?? false,
  };
}

function effectiveLimits(options: ParseQueryOptions | undefined): QueryLimits {
  return { ...DEFAULT_QUERY_LIMITS, ...options?.limits };
}

/**
 * Parses and validates the OData query options of a request against an entity model.
 * Parameters not starting with `$` (such as `api-version`) are ignored; unknown `$` options,
 * repeated options, syntax errors, unknown properties and exceeded limits throw ODataError.
 */
export function parseQueryOptions(query: QueryParams, entity: EntityModel, options?: ParseQueryOptions): ODataQuery {
  const limits = effectiveLimits(options);
  const raw = parseRaw(query, limits);
  return finish(raw, limits, {
    ...(raw.filter ? { filter: bindFilter(raw.filter, entity, '$filter', '$filter') } : {}),
    orderBy: bindOrderBy(raw.orderBy, entity, '$orderby', '$orderby'),
    ...(raw.select ? { select: bindSelect(raw.select, entity, '$select', '$select') } : {}),
    expand: bindExpand(raw.expand, entity, '$expand'),
  });
}

/**
 * Syntax-only variant: checks the grammar and the limits but resolves no names (the tree is
 * unbound and carries no types). Used by the conformance tests; not for executing queries.
 */
export function parseQueryOptionsSyntax(query: QueryParams, options?: ParseQueryOptions): ODataQuery {
  const limits = effectiveLimits(options);
  const raw = parseRaw(query, limits);
  return finish(raw, limits, {
    ...(raw.filter ? { filter: raw.filter } : {}),
    orderBy: raw.orderBy,
    ...(raw.select ? { select: raw.select } : {}),
    expand: unboundExpand(raw.expand),
  });
}
