/** Scanning of query-option text: string literals, parentheses, top-level separators, paths. */
import { ODataError, quoteForMessage } from './errors.js';

const NAME = '[\\p{L}\\p{Nl}_][\\p{L}\\p{Nl}\\p{Nd}\\p{Mn}\\p{Mc}\\p{Pc}\\p{Cf}]{0,127}';

/** A sticky pattern of `*` or a property path (`a/b`), as `$select` and `$expand` items start. */
export function starOrPathPattern(): RegExp {
  return new RegExp(`\\*|${NAME}(?:/${NAME})*`, 'uy');
}

export function describeAt(text: string, pos: number): string {
  return pos >= text.length ? 'the end' : quoteForMessage(String.fromCodePoint(text.codePointAt(pos)!));
}

/** Index of the parenthesis closing the one at `open`, skipping string literals. */
export function findClose(text: string, open: number, error: (pos: number, message: string) => ODataError): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = skipString(text, i);
      if (end < 0) throw error(i, 'unterminated string literal');
      i = end - 1;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
      if (depth === 0) return i;
    }
  }
  throw error(open, "missing ')'");
}

/** End (exclusive) of the string literal starting at `start`, or -1. */
export function skipString(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = text.indexOf("'", i);
    if (q < 0) return -1;
    if (text[q + 1] === "'") {
      i = q + 2;
      continue;
    }
    return q + 1;
  }
}

/** Splits on `sep` outside parentheses and string literals. */
export function splitTopLevel(text: string, sep: string): Array<{ text: string; start: number }> {
  const out: Array<{ text: string; start: number }> = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = skipString(text, i);
      if (end < 0) break;
      i = end - 1;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === sep && depth === 0) {
      out.push({ text: text.slice(start, i), start });
      start = i + 1;
    }
  }
  out.push({ text: text.slice(start), start });
  return out;
}
