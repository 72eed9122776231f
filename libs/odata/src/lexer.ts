import { ODataError, quoteForMessage } from './errors.js';

export type TokenKind =
  'ident' | 'string' | 'number' | 'date' | 'datetime' | 'guid' | '(' | ')' | ',' | '/' | '-' | '*' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** Source text of the token. */
  readonly text: string;
  readonly pos: number;
  readonly end: number;
  /** Whitespace (SP / HTAB) directly before the token. */
  readonly spaceBefore: boolean;
}

const IDENT_START = /[\p{L}\p{Nl}_]/uy;
const IDENT = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*/uy;
const IDENT_CHAR = /[\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]/uy;
const GUID = /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/y;
// year: [-] ( "0" 3DIGIT / oneToNine 3*DIGIT ); month/day/hour/minute validated by the literal parser.
const DATETIME = /-?(?:0\d{3}|[1-9]\d{3,})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/y;
const DATE = /-?(?:0\d{3}|[1-9]\d{3,})-\d{2}-\d{2}/y;
const NUMBER = /[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function test(re: RegExp, text: string, pos: number): string | undefined {
  re.lastIndex = pos;
  const m = re.exec(text);
  return m ? m[0] : undefined;
}

/** Maximum identifier length (odataIdentifier: 1 + 127 characters). */
export const MAX_IDENTIFIER_LENGTH = 128;

/**
 * On-demand tokenizer for OData expressions. Whitespace is SP / HTAB only (the value is already
 * percent-decoded); it is not a token but recorded on the following token for RWS checks.
 */
export class Lexer {
  private pos = 0;
  private peeked: Token | undefined;

  constructor(
    readonly text: string,
    readonly target: string,
    /** Offset of `text` inside the option value, for positions in messages. */
    readonly base = 0,
  ) {}

  error(pos: number, message: string): ODataError {
    const at = this.base + pos;
    return new ODataError(
      'QuerySyntaxError',
      this.target,
      `Syntax error in ${this.target} at position ${at}: ${message}`,
      { position: at },
    );
  }

  peek(): Token {
    this.peeked ??= this.scan();
    return this.peeked;
  }

  next(): Token {
    const t = this.peek();
    this.peeked = undefined;
    return t;
  }

  private scan(): Token {
    const text = this.text;
    let pos = this.pos;
    const start0 = pos;
    while (pos < text.length && (text[pos] === ' ' || text[pos] === '\t')) pos++;
    const spaceBefore = pos > start0;
    const make = (kind: TokenKind, end: number): Token => {
      this.pos = end;
      return { kind, text: text.slice(pos, end), pos, end, spaceBefore };
    };
    if (pos >= text.length) return make('eof', pos);
    const c = text[pos]!;
    switch (c) {
      case '(':
      case ')':
      case ',':
      case '/':
      case '*':
        return make(c, pos + 1);
      case "'":
        return make('string', this.scanString(pos));
      default:
        break;
    }
    const guid = /[0-9A-Fa-f]/.test(c) ? test(GUID, text, pos) : undefined;
    if (guid && !this.identCharAt(pos + guid.length)) return make('guid', pos + guid.length);
    if (/[0-9+-]/.test(c)) {
      const signed = c === '+' || c === '-';
      if (!signed || /[0-9]/.test(text[pos + 1] ?? '')) {
        if (c !== '+') {
          const dt = test(DATETIME, text, pos);
          if (dt) return this.literalEnd(make('datetime', pos + dt.length));
          const d = test(DATE, text, pos);
          if (d) return this.literalEnd(make('date', pos + d.length));
        }
        const n = test(NUMBER, text, pos)!;
        return this.literalEnd(make('number', pos + n.length));
      }
      if (c === '-') return make('-', pos + 1);
      throw this.error(pos, `unexpected character ${quoteForMessage(c)}`);
    }
    if (test(IDENT_START, text, pos) !== undefined) {
      const id = test(IDENT, text, pos)!;
      if (id.length > MAX_IDENTIFIER_LENGTH)
        throw this.error(pos, `identifier longer than ${MAX_IDENTIFIER_LENGTH} characters`);
      const end = pos + id.length;
      const after = text[end];
      if (after === "'") {
        throw this.error(
          pos,
          `typed literal ${quoteForMessage(id)}'...' is not supported (only string, number, boolean, null, date, date-time and guid literals)`,
        );
      }
      if (after === '.')
        throw this.error(end, 'qualified names (namespaces, type casts, custom functions) are not supported');
      return make('ident', end);
    }
    const hints: Record<string, string> = {
      $: ' ($it, $root, $this, $count and other $-segments are not supported)',
      '@': ' (parameter aliases and annotations are not supported)',
      '[': ' (JSON arrays are not supported)',
      '{': ' (JSON objects are not supported)',
      '"': ' (strings use single quotes)',
    };
    const cp = String.fromCodePoint(text.codePointAt(pos)!);
    throw this.error(pos, `unexpected character ${quoteForMessage(cp)}${hints[c] ?? ''}`);
  }

  private identCharAt(pos: number): boolean {
    return pos < this.text.length && (test(IDENT_CHAR, this.text, pos) !== undefined || this.text[pos] === '_');
  }

  /** A literal directly followed by an identifier character or a dot is malformed (e.g. `42.`, `2x4`). */
  private literalEnd(token: Token): Token {
    const next = this.text[token.end];
    if (next === '.' || this.identCharAt(token.end)) {
      throw this.error(token.end, `malformed literal ${quoteForMessage(this.text.slice(token.pos, token.end + 1))}`);
    }
    return token;
  }

  private scanString(pos: number): number {
    const text = this.text;
    let i = pos + 1;
    for (;;) {
      const q = text.indexOf("'", i);
      if (q < 0) throw this.error(pos, 'unterminated string literal');
      if (text[q + 1] === "'") {
        i = q + 2;
        continue;
      }
      return q + 1;
    }
  }
}
