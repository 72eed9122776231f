/**
 * Hand-written precedence-climbing parser for OData 4.0 `$filter` / `$orderby` expressions.
 *
 * Precedence, lowest first (all binary operators left-associative):
 *   or < and < not (unary) < comparison (eq ne gt ge lt le, in) < additive (add sub)
 *      < multiplicative (mul div mod) < unary minus < primary
 *
 * Limits are enforced while parsing: the node budget fails on the first node over the limit and
 * the nesting depth (parentheses, function arguments) is bounded, so hostile input such as 10,000
 * nested parentheses ends in an ODataError long before the JavaScript stack is at risk.
 */
import {
  ARITHMETIC_OPERATORS,
  COMPARISON_OPERATORS,
  FUNCTIONS,
  type BinaryOperator,
  type ExprNode,
  type FunctionName,
  type LiteralNode,
  type OrderByItem,
  type SortDirection,
} from './ast.js';
import { ODataError, quoteForMessage } from './errors.js';
import { Lexer, type Token } from './lexer.js';
import { DEFAULT_EXPRESSION_LIMITS, describe, TokenCursor, type ExpressionLimits } from './token-cursor.js';
import { LiteralError, literalFromToken } from './literals.js';

export { DEFAULT_EXPRESSION_LIMITS, type ExpressionLimits } from './token-cursor.js';

/** OData functions that exist but are outside the contract's subset: named in the error message. */
const UNSUPPORTED_FUNCTIONS = new Set([
  'matchespattern',
  'fractionalseconds',
  'totalseconds',
  'date',
  'time',
  'totaloffsetminutes',
  'mindatetime',
  'maxdatetime',
  'now',
  'round',
  'floor',
  'ceiling',
  'cast',
  'isof',
  'hassubset',
  'hassubsequence',
  'case',
  'any',
  'all',
]);

const UNSUPPORTED_OPERATORS: Record<string, string> = {
  has: "the 'has' operator (enumerations) is not supported",
  divby: "the 'divby' operator (OData 4.01) is not supported",
};

export class ExpressionParser extends TokenCursor {
  // ---- entry points ---------------------------------------------------------------------------

  /** Parses a whole `$filter` value. */
  parseFilter(): ExprNode {
    this.noLeadingSpace();
    const expr = this.parseOr();
    this.expectEnd();
    return expr;
  }

  /** Parses a whole `$orderby` value: `expr [asc|desc]` items separated by commas. */
  parseOrderBy(maxItems: number): OrderByItem[] {
    this.noLeadingSpace();
    const items: OrderByItem[] = [];
    for (;;) {
      if (items.length >= maxItems) {
        throw new ODataError('QueryLimitExceeded', this.lexer.target, `${this.what} has more than ${maxItems} items`);
      }
      const first = this.peek();
      if (first.spaceBefore && items.length > 0) throw this.error(first, 'whitespace after a comma is not allowed');
      const expr = this.parseOr();
      let direction: SortDirection = 'asc';
      const t = this.peek();
      if (this.isWord(t, 'asc') || this.isWord(t, 'desc')) {
        if (!t.spaceBefore) throw this.error(t, 'whitespace required before the sort direction');
        direction = t.text.toLowerCase() as SortDirection;
        this.next();
      }
      items.push({ expr, direction });
      const sep = this.peek();
      if (sep.kind === ',') {
        if (sep.spaceBefore) throw this.error(sep, 'whitespace before a comma is not allowed');
        this.next();
        continue;
      }
      this.expectEnd();
      return items;
    }
  }

  private noLeadingSpace(): void {
    const t = this.peek();
    if (t.spaceBefore) throw this.error(0, 'leading whitespace is not allowed');
    if (t.kind === 'eof') throw this.error(t, 'empty expression');
  }

  private expectEnd(): void {
    const t = this.peek();
    if (t.kind === 'eof') {
      if (t.spaceBefore) throw this.error(t, 'trailing whitespace is not allowed');
      return;
    }
    if (t.kind === 'ident' && UNSUPPORTED_OPERATORS[t.text.toLowerCase()])
      throw this.error(t, UNSUPPORTED_OPERATORS[t.text.toLowerCase()]!);
    throw this.error(t, `expected an operator or the end of the expression, found ${describe(t)}`);
  }

  // ---- precedence levels ----------------------------------------------------------------------

  private binary(op: BinaryOperator, left: ExprNode, right: ExprNode, pos: number): ExprNode {
    this.count();
    return { kind: 'binary', op, left, right, pos };
  }

  private parseOr(): ExprNode {
    let left = this.parseAnd();
    for (let m = this.takeOperator(['or']); m; m = this.takeOperator(['or'])) {
      left = this.binary('or', left, this.parseAnd(), m.token.pos);
    }
    return left;
  }

  private parseAnd(): ExprNode {
    let left = this.parseNot();
    for (let m = this.takeOperator(['and']); m; m = this.takeOperator(['and'])) {
      left = this.binary('and', left, this.parseNot(), m.token.pos);
    }
    return left;
  }

  /** `not` binds looser than comparisons: `not a eq 1` is `not (a eq 1)`. Chains are iterated. */
  private parseNot(): ExprNode {
    const nots: Token[] = [];
    while (this.isNotOperator()) {
      const t = this.next();
      this.count();
      nots.push(t);
    }
    let expr = this.parseComparison();
    for (let i = nots.length - 1; i >= 0; i--) expr = { kind: 'unary', op: 'not', operand: expr, pos: nots[i]!.pos };
    return expr;
  }

  /** `not` followed by whitespace and an operand (or directly by a parenthesis) is the operator. */
  private isNotOperator(): boolean {
    const t = this.peek();
    if (!this.isWord(t, 'not')) return false;
    const after = this.peek(1);
    if (after.kind === '(' && !after.spaceBefore) return true;
    if (!after.spaceBefore) return false;
    if (after.kind === 'eof' || after.kind === ')' || after.kind === ',') return false;
    // `not eq 1`: a property named "not" compared with 1.
    if (after.kind === 'ident') {
      const w = after.text.toLowerCase();
      if (
        (COMPARISON_OPERATORS as readonly string[]).includes(w) ||
        (ARITHMETIC_OPERATORS as readonly string[]).includes(w)
      )
        return false;
      if (w === 'and' || w === 'or' || w === 'in') return false;
    }
    return true;
  }

  private parseComparison(): ExprNode {
    let left = this.parseAdditive();
    for (;;) {
      const t = this.peek();
      if (t.kind === 'ident' && t.text.toLowerCase() === 'has' && t.spaceBefore)
        throw this.error(t, UNSUPPORTED_OPERATORS['has']!);
      const m = this.takeOperator([...COMPARISON_OPERATORS, 'in']);
      if (!m) return left;
      if (m.op === 'in') {
        left = this.parseIn(left, m.token);
      } else {
        left = this.binary(m.op as BinaryOperator, left, this.parseAdditive(), m.token.pos);
      }
    }
  }

  private parseAdditive(): ExprNode {
    return this.additiveRest(this.parseMultiplicative());
  }

  private additiveRest(start: ExprNode): ExprNode {
    let left = start;
    for (let m = this.takeOperator(['add', 'sub']); m; m = this.takeOperator(['add', 'sub'])) {
      left = this.binary(m.op as BinaryOperator, left, this.parseMultiplicative(), m.token.pos);
    }
    return left;
  }

  private parseMultiplicative(): ExprNode {
    return this.multiplicativeRest(this.parseUnary());
  }

  private multiplicativeRest(start: ExprNode): ExprNode {
    let left = start;
    for (;;) {
      const t = this.peek();
      if (t.kind === 'ident' && t.text.toLowerCase() === 'divby' && t.spaceBefore)
        throw this.error(t, UNSUPPORTED_OPERATORS['divby']!);
      const m = this.takeOperator(['mul', 'div', 'mod']);
      if (!m) return left;
      left = this.binary(m.op as BinaryOperator, left, this.parseUnary(), m.token.pos);
    }
  }

  /** Unary minus (`-` BWS operand); chains are iterated. `-5` is lexed as a literal already. */
  private parseUnary(): ExprNode {
    const minus: Token[] = [];
    while (this.peek().kind === '-') {
      minus.push(this.next());
      this.count();
    }
    let expr = this.parsePrimary();
    for (let i = minus.length - 1; i >= 0; i--)
      expr = { kind: 'unary', op: 'negate', operand: expr, pos: minus[i]!.pos };
    return expr;
  }

  private parsePrimary(): ExprNode {
    const t = this.peek();
    switch (t.kind) {
      case '(': {
        this.next();
        this.enter(t);
        const inner = this.parseOr();
        this.expect(')', "')'");
        this.leave();
        return inner;
      }
      case 'string':
      case 'number':
      case 'date':
      case 'datetime':
      case 'guid':
        this.next();
        return this.literal(t);
      case 'ident':
        return this.parseIdentifier();
      case ')':
      case ',':
      case '/':
      case '-':
      case '*':
      case 'eof':
        throw this.error(t, `expected an operand, found ${describe(t)}`);
    }
  }

  private literal(t: Token): LiteralNode {
    let parsed;
    try {
      parsed = literalFromToken(t);
    } catch (e) {
      if (e instanceof LiteralError) throw this.error(t.pos + e.offset, `${e.message} in ${quoteForMessage(t.text)}`);
      throw e;
    }
    if (!parsed) throw this.error(t, `expected a literal, found ${describe(t)}`);
    this.count();
    return { kind: 'literal', literalType: parsed.literalType, value: parsed.value, raw: t.text, pos: t.pos };
  }

  private parseIdentifier(): ExprNode {
    const t = this.next();
    const after = this.peek();
    if (after.kind === '(' && !after.spaceBefore) return this.parseCall(t);
    const keyword = literalFromToken(t);
    if (keyword) {
      this.count();
      return { kind: 'literal', literalType: keyword.literalType, value: keyword.value, raw: t.text, pos: t.pos };
    }
    const path = [t.text];
    while (this.peek().kind === '/' && !this.peek().spaceBefore) {
      const slash = this.next();
      const seg = this.next();
      if (seg.kind !== 'ident' || seg.spaceBefore)
        throw this.error(
          seg.kind === 'eof' ? slash.end : seg.pos,
          `expected a property name after '/', found ${describe(seg)}`,
        );
      const next = this.peek();
      if (next.kind === '(' && !next.spaceBefore) {
        throw this.error(
          seg,
          `${quoteForMessage(seg.text)}(...) after '/': lambda operators, bound functions and key access are not supported`,
        );
      }
      path.push(seg.text);
    }
    this.count();
    return { kind: 'property', path, pos: t.pos };
  }

  private parseCall(nameToken: Token): ExprNode {
    const lower = nameToken.text.toLowerCase();
    if (!Object.hasOwn(FUNCTIONS, lower)) {
      if (UNSUPPORTED_FUNCTIONS.has(lower)) throw this.error(nameToken, `function '${lower}' is not supported`);
      throw this.error(
        nameToken,
        `unknown function ${quoteForMessage(nameToken.text)} (key access and custom functions are not supported)`,
      );
    }
    const name = lower as FunctionName;
    const open = this.next();
    this.enter(open);
    this.count();
    const args: ExprNode[] = [];
    if (this.peek().kind !== ')') {
      for (;;) {
        args.push(this.parseOr());
        const sep = this.peek();
        if (sep.kind === ',') {
          this.next();
          continue;
        }
        break;
      }
    }
    this.expect(')', "',' or ')'");
    this.leave();
    const arity = FUNCTIONS[name];
    if (args.length < arity.min || args.length > arity.max) {
      const expected = arity.min === arity.max ? `${arity.min}` : `${arity.min} or ${arity.max}`;
      throw this.error(
        nameToken,
        `function '${name}' takes ${expected} argument${arity.max === 1 ? '' : 's'}, got ${args.length}`,
      );
    }
    return { kind: 'call', name, args, pos: nameToken.pos };
  }

  /**
   * `x in (l1, l2)`: a list of literals (possibly empty). The ABNF also allows a parenthesised or
   * bare common expression on the right; those are kept as `collection` for the binder to judge.
   */
  private parseIn(operand: ExprNode, inToken: Token): ExprNode {
    this.count();
    const open = this.peek();
    if (open.kind !== '(') {
      return { kind: 'in', operand, list: null, collection: this.parseAdditive(), pos: inToken.pos };
    }
    this.next();
    this.enter(open);
    if (this.peek().kind === ')') {
      this.next();
      this.leave();
      return { kind: 'in', operand, list: [], pos: inToken.pos };
    }
    const first = this.parseOr();
    if (this.peek().kind === ',') {
      if (first.kind !== 'literal') throw this.error(this.peek(), "the list of 'in' may contain only literals");
      const list: LiteralNode[] = [first];
      while (this.peek().kind === ',') {
        this.next();
        const t = this.next();
        if (!['string', 'number', 'date', 'datetime', 'guid', 'ident'].includes(t.kind)) {
          throw this.error(t, `expected a literal in the list of 'in', found ${describe(t)}`);
        }
        const lit = this.literal(t);
        const after = this.peek();
        if (after.kind !== ',' && after.kind !== ')')
          throw this.error(after, "the list of 'in' may contain only literals");
        list.push(lit);
      }
      this.expect(')', "',' or ')'");
      this.leave();
      return { kind: 'in', operand, list, pos: inToken.pos };
    }
    this.expect(')', "',' or ')'");
    this.leave();
    // `x in (e) add 1`: the parenthesised expression starts an arithmetic operand.
    const rest = this.additiveRest(this.multiplicativeRest(first));
    if (rest === first && first.kind === 'literal') return { kind: 'in', operand, list: [first], pos: inToken.pos };
    return { kind: 'in', operand, list: null, collection: rest, pos: inToken.pos };
  }
}

export interface ParseExpressionOptions {
  /** Query option name used as error target (default `$filter`). */
  target?: string;
  /** Offset of the text inside the option value, for positions. */
  base?: number;
  limits?: Partial<ExpressionLimits>;
  /** Names what is parsed in limit messages. */
  what?: string;
}

/** Parses a `$filter` expression into a syntax tree (no model: names are not resolved). */
export function parseFilterExpression(text: string, options: ParseExpressionOptions = {}): ExprNode {
  const target = options.target ?? '$filter';
  const lexer = new Lexer(text, target, options.base ?? 0);
  return new ExpressionParser(
    lexer,
    { ...DEFAULT_EXPRESSION_LIMITS, ...options.limits },
    options.what ?? target,
  ).parseFilter();
}

/** Parses an `$orderby` value into items (no model). */
export function parseOrderByExpression(
  text: string,
  maxItems = 5,
  options: ParseExpressionOptions = {},
): OrderByItem[] {
  const target = options.target ?? '$orderby';
  const lexer = new Lexer(text, target, options.base ?? 0);
  return new ExpressionParser(
    lexer,
    { ...DEFAULT_EXPRESSION_LIMITS, ...options.limits },
    options.what ?? target,
  ).parseOrderBy(maxItems);
}

/** Parses a single literal (URL form, already percent-decoded). Throws QuerySyntaxError. */
export function parseLiteral(text: string, target = '$filter'): LiteralNode {
  const lexer = new Lexer(text, target);
  const token = lexer.next();
  if (token.spaceBefore) throw lexer.error(0, 'leading whitespace is not allowed');
  const end = lexer.next();
  if (end.kind !== 'eof' || end.spaceBefore)
    throw lexer.error(end.pos, `unexpected ${describe(end)} after the literal`);
  let parsed;
  try {
    parsed = literalFromToken(token);
  } catch (e) {
    if (e instanceof LiteralError) throw lexer.error(token.pos + e.offset, e.message);
    throw e;
  }
  if (!parsed) throw lexer.error(0, `expected a literal, found ${describe(token)}`);
  return { kind: 'literal', literalType: parsed.literalType, value: parsed.value, raw: text, pos: 0 };
}
