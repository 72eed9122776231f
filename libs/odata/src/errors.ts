/**
 * The one error type of the OData query engine. `code` is the OData error code of the interface B
 * contract, `target` names the offending query option (`$filter`, `$orderby`, ...). Messages name
 * the offending property or token and the position, never SQL text.
 */
import type { ODataQueryErrorCode } from '@switchboard/contracts';

/** The contract's list (`ODATA_QUERY_ERROR_CODES`): the published error schema is built from it. */
export type ODataErrorCode = ODataQueryErrorCode;

export interface ODataErrorDetail {
  code: string;
  message: string;
  target?: string;
}

export class ODataError extends Error {
  override readonly name = 'ODataError';
  readonly code: ODataErrorCode;
  readonly target: string;
  readonly details?: ODataErrorDetail[];
  /** 0-based character offset in the option value where the problem was found, when known. */
  readonly position?: number;

  constructor(
    code: ODataErrorCode,
    target: string,
    message: string,
    options: { position?: number; details?: ODataErrorDetail[] } = {},
  ) {
    super(message);
    this.code = code;
    this.target = target;
    if (options.position !== undefined) this.position = options.position;
    if (options.details !== undefined) this.details = options.details;
  }

  /** The OData JSON error body: `{ error: { code, message, target, details } }`. */
  toJSON(): { error: { code: ODataErrorCode; message: string; target: string; details?: ODataErrorDetail[] } } {
    const error: { code: ODataErrorCode; message: string; target: string; details?: ODataErrorDetail[] } = {
      code: this.code,
      message: this.message,
      target: this.target,
    };
    if (this.details) error.details = this.details;
    return { error };
  }
}

export function isODataError(value: unknown): value is ODataError {
  return value instanceof ODataError;
}

/** Shortens user text echoed in messages and makes control characters visible. */
export function quoteForMessage(text: string, max = 64): string {
  const cut = text.length > max ? `${text.slice(0, max)}...` : text;
  let shown = '';
  for (const char of cut) {
    const code = char.charCodeAt(0);
    shown += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : char;
  }
  return `'${shown}'`;
}
