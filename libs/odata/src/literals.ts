import type { LiteralType, LiteralValue } from './ast.js';
import { MS_PER_DAY, daysFromCivil, daysInMonth } from './calendar.js';
import type { Token } from './lexer.js';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
/** JavaScript's Date range, used as the range of date and date-time literals (about ±275,000 years). */
export const MAX_EPOCH_MS = 8_640_000_000_000_000n;

export interface ParsedLiteral {
  literalType: LiteralType;
  value: LiteralValue;
}

/** Raised by the literal parsers: `offset` is relative to the literal's first character. */
export class LiteralError extends Error {
  constructor(
    message: string,
    readonly offset = 0,
  ) {
    super(message);
  }
}

/** `true`/`false` are case-insensitive in the ABNF; `null` is case-sensitive. */
export function keywordLiteral(ident: string): ParsedLiteral | undefined {
  if (ident === 'null') return { literalType: 'null', value: null };
  const lower = ident.toLowerCase();
  if (lower === 'true') return { literalType: 'boolean', value: true };
  if (lower === 'false') return { literalType: 'boolean', value: false };
  return undefined;
}

export function parseNumber(text: string): ParsedLiteral {
  if (!/^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) throw new LiteralError('malformed number');
  if (/^[+-]?\d+$/.test(text)) {
    const value = BigInt(text);
    if (value < INT64_MIN || value > INT64_MAX) throw new LiteralError('integer literal out of the Int64 range');
    return { literalType: 'integer', value };
  }
  const value = Number(text);
  if (!Number.isFinite(value)) throw new LiteralError('number literal out of range');
  return { literalType: 'decimal', value };
}

/** Checks that a decoded string holds no NUL and no unpaired surrogate (not storable in PostgreSQL text). */
export function checkStringContent(value: string): string | undefined {
  if (value.includes('\u0000')) return 'string literal contains a NUL character';
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value))
    return 'string literal contains an unpaired surrogate';
  return undefined;
}

export function parseString(text: string): ParsedLiteral {
  if (text.length < 2 || !text.startsWith("'") || !text.endsWith("'"))
    throw new LiteralError('malformed string literal');
  const inner = text.slice(1, -1);
  // Every quote inside must be doubled.
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === "'") {
      if (inner[i + 1] !== "'") throw new LiteralError('single quote inside a string literal must be doubled', i + 1);
      i++;
    }
  }
  const value = inner.replaceAll("''", "'");
  const bad = checkStringContent(value);
  if (bad) throw new LiteralError(bad);
  return { literalType: 'string', value };
}

const DATE_PARTS = /^(-?(?:0\d{3}|[1-9]\d{3,}))-(\d{2})-(\d{2})$/;
const DATETIME_PARTS =
  /^(-?(?:0\d{3}|[1-9]\d{3,}))-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

function civilDays(y: string, m: string, d: string): bigint {
  const year = BigInt(y);
  const month = BigInt(m);
  const day = BigInt(d);
  if (month < 1n || month > 12n) throw new LiteralError('month out of range', y.length + 1);
  if (day < 1n || day > BigInt(daysInMonth(year, month)))
    throw new LiteralError('day out of range for the month', y.length + 4);
  return daysFromCivil(year, month, day);
}

function checkRange(ms: bigint): bigint {
  if (ms < -MAX_EPOCH_MS || ms > MAX_EPOCH_MS) throw new LiteralError('date out of the supported range');
  return ms;
}

/** `date` literal: midnight UTC of the day, as epoch milliseconds. */
export function parseDate(text: string): ParsedLiteral {
  const m = DATE_PARTS.exec(text);
  if (!m) throw new LiteralError('malformed date');
  return { literalType: 'date', value: checkRange(civilDays(m[1]!, m[2]!, m[3]!) * MS_PER_DAY) };
}

/** `dateTimeOffset` literal as epoch milliseconds; sub-millisecond digits must be zero. */
export function parseDateTimeOffset(text: string): ParsedLiteral {
  const m = DATETIME_PARTS.exec(text);
  if (!m) throw new LiteralError('malformed date-time');
  const [, y, mo, d, hh, mi, ss, frac, zone, sign, oh, om] = m;
  const timeAt = y!.length + 7;
  const hour = Number(hh);
  const minute = Number(mi);
  const second = ss === undefined ? 0 : Number(ss);
  if (hour > 23) throw new LiteralError('hour out of range', timeAt);
  if (minute > 59) throw new LiteralError('minute out of range', timeAt + 3);
  if (second > 60) throw new LiteralError('second out of range', timeAt + 6);
  let millis = 0n;
  if (frac !== undefined) {
    if (frac.length > 12) throw new LiteralError('more than 12 fractional second digits', timeAt + 9 + 12);
    if (/[1-9]/.test(frac.slice(3)))
      throw new LiteralError('sub-millisecond precision is not supported', timeAt + 9 + 3);
    millis = BigInt(frac.slice(0, 3).padEnd(3, '0'));
  }
  let offsetMinutes = 0n;
  if (zone !== 'Z') {
    const zoneAt = text.length - 6;
    if (Number(oh) > 23) throw new LiteralError('offset hour out of range', zoneAt + 1);
    if (Number(om) > 59) throw new LiteralError('offset minute out of range', zoneAt + 4);
    offsetMinutes = BigInt(Number(oh) * 60 + Number(om)) * (sign === '-' ? -1n : 1n);
  }
  const ms =
    civilDays(y!, mo!, d!) * MS_PER_DAY +
    BigInt(hour) * 3_600_000n +
    BigInt(minute) * 60_000n +
    BigInt(second) * 1000n +
    millis -
    offsetMinutes * 60_000n;
  return { literalType: 'datetimeoffset', value: checkRange(ms) };
}

export function parseGuid(text: string): ParsedLiteral {
  if (!/^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/.test(text))
    throw new LiteralError('malformed guid');
  return { literalType: 'guid', value: text.toLowerCase() };
}

/** Converts a literal token into its value (throws LiteralError). */
export function literalFromToken(token: Token): ParsedLiteral | undefined {
  switch (token.kind) {
    case 'string':
      return parseString(token.text);
    case 'number':
      return parseNumber(token.text);
    case 'date':
      return parseDate(token.text);
    case 'datetime':
      return parseDateTimeOffset(token.text);
    case 'guid':
      return parseGuid(token.text);
    case 'ident':
      return keywordLiteral(token.text);
    case '(':
    case ')':
    case ',':
    case '/':
    case '-':
    case '*':
    case 'eof':
      return undefined;
  }
}
