/** The token stream under the expression parser: look-ahead, errors, and the node and depth budgets. */
import { ODataError, quoteForMessage } from './errors.js';
import type { Lexer, Token } from './lexer.js';

export interface ExpressionLimits {
  /** Maximum number of nodes in one expression tree (`$filter`), or in all `$orderby` items together. */
  maxNodes: number;
  /** Maximum nesting of parentheses and function calls. */
  maxDepth: number;
}

export const DEFAULT_EXPRESSION_LIMITS: ExpressionLimits = { maxNodes: 100, maxDepth: 100 };

/** A token as error messages name it. */
export function describe(t: Token): string {
  if (t.kind === 'eof') return 'the end of the expression';
  return quoteForMessage(t.text);
}

export class TokenCursor {
  private nodes = 0;
  private depth = 0;
  private buffer: Token[] = [];

  constructor(
    protected readonly lexer: Lexer,
    protected readonly limits: ExpressionLimits = DEFAULT_EXPRESSION_LIMITS,
    /** Text naming what is parsed in limit messages, e.g. `$filter` or `$filter in $expand`. */
    protected readonly what: string = lexer.target,
  ) {}

  get nodeCount(): number {
    return this.nodes;
  }

  protected peek(k = 0): Token {
    while (this.buffer.length <= k) this.buffer.push(this.lexer.next());
    return this.buffer[k]!;
  }

  protected next(): Token {
    const t = this.peek();
    this.buffer.shift();
    return t;
  }

  protected error(token: Token | number, message: string): ODataError {
    return this.lexer.error(typeof token === 'number' ? token : token.pos, message);
  }

  protected expect(kind: Token['kind'], what: string): Token {
    const t = this.next();
    if (t.kind !== kind) throw this.error(t, `expected ${what}, found ${describe(t)}`);
    return t;
  }

  protected count(): void {
    if (++this.nodes > this.limits.maxNodes) {
      throw new ODataError(
        'QueryLimitExceeded',
        this.lexer.target,
        `${this.what} has more than ${this.limits.maxNodes} nodes`,
      );
    }
  }

  protected enter(token: Token): void {
    if (++this.depth > this.limits.maxDepth) {
      throw new ODataError(
        'QueryLimitExceeded',
        this.lexer.target,
        `${this.what} nests parentheses or function calls deeper than ${this.limits.maxDepth} levels ` +
          `(position ${this.lexer.base + token.pos})`,
        { position: this.lexer.base + token.pos },
      );
    }
  }

  protected leave(): void {
    this.depth--;
  }

  /** Is `t` the (case-insensitive) keyword `word`? */
  protected isWord(t: Token, word: string): boolean {
    return t.kind === 'ident' && t.text.length === word.length && t.text.toLowerCase() === word;
  }

  /** A binary keyword operator needs whitespace (RWS) on both sides. */
  protected takeOperator(words: readonly string[]): { op: string; token: Token } | undefined {
    const t = this.peek();
    if (t.kind !== 'ident') return undefined;
    const lower = t.text.toLowerCase();
    if (!words.includes(lower)) return undefined;
    const after = this.peek(1);
    if (!t.spaceBefore || !after.spaceBefore || after.kind === 'eof') {
      throw this.error(t, `operator '${lower}' must be surrounded by whitespace and followed by an operand`);
    }
    this.next();
    return { op: lower, token: t };
  }
}
