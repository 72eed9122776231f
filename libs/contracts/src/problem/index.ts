/**
 * Domain errors know nothing of HTTP: services throw DomainError with a code; each transport maps
 * the code once (Problem body on interface A, OData error on interface B, typed error over NATS).
 */
export const ERROR_CODES = [
  'ValidationFailed',
  'NotFound',
  'Conflict',
  'Unauthorized',
  'Forbidden',
  'PayloadTooLarge',
  // refusals of the HTTP framework itself, before any route runs (service-kit's http-edge.ts)
  'MethodNotAllowed',
  'UnsupportedMediaType',
  'UriTooLong',
  'RequestHeaderFieldsTooLarge',
  'RequestTimeout',
  'Unavailable',
  'Timeout',
  'Internal',
] as const;

/**
 * Refusals only the /sync client edge gives (admin-gateway maps each to an error frame, edge/sync-frames.ts).
 * No HTTP or NATS answer carries them, so ERROR_CODES, the codes of those answers, leaves them out.
 */
export const EDGE_ERROR_CODES = [
  'InvalidFrame',
  'TooManyRequests',
  'NotRegistered',
  'AlreadyRegistered',
  'TokenInvalid',
  'TokenExpired',
  'ApplicationRefused',
  // a valid join token naming another client than the registered one
  'TokenForAnotherClient',
  'NotJoined',
  'AlreadyJoined',
  'UnknownConnection',
  'InvalidTransition',
  'UnmuteDisabled',
] as const;
export type EdgeErrorCode = (typeof EDGE_ERROR_CODES)[number];
/** The code of a DomainError: each transport maps every one (HTTP_STATUS_OF, admin-gateway's /sync frames). */
export type ErrorCode = (typeof ERROR_CODES)[number] | EdgeErrorCode;

/**
 * The OData codes of a refused query option (interface B, http-contract.md): the code the OData
 * engine (`@switchboard/odata`, whose `ODataErrorCode` is this type) gives a refusal, sent in the
 * error body in place of the transport code `ValidationFailed`. Services that bind forwarded options
 * put it first in the detail message (`'<code>: <message>'`, see `odataQueryErrorCodeOf`).
 */
export const ODATA_QUERY_ERROR_CODES = [
  'QuerySyntaxError',
  'QueryLimitExceeded',
  'UnknownProperty',
  'ValidationFailed',
] as const;
export type ODataQueryErrorCode = (typeof ODATA_QUERY_ERROR_CODES)[number];

/** Every `code` an interface B error body can carry: a query code or a transport code. */
export const ODATA_ERROR_CODES: readonly (ODataQueryErrorCode | ErrorCode)[] = [
  ...new Set([...ODATA_QUERY_ERROR_CODES, ...ERROR_CODES]),
];

const QUERY_CODE_PREFIX = new RegExp(`^(${ODATA_QUERY_ERROR_CODES.join('|')}): `);

/** The query code leading a detail message (`'UnknownProperty: ...'`) and the rest of the message, or undefined. */
export function odataQueryErrorCodeOf(message: string): { code: ODataQueryErrorCode; message: string } | undefined {
  const m = QUERY_CODE_PREFIX.exec(message);
  return m ? { code: m[1] as ODataQueryErrorCode, message: message.slice(m[0].length) } : undefined;
}

export interface ErrorDetail {
  field?: string;
  message: string;
}

/** The shape an error takes on the wire between services. */
export interface WireError {
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
}

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** The offending option or field, when one is to blame. */
    readonly target?: string,
  ) {
    super(message);
  }

  toWire(): WireError {
    return this.details.length
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }

  static fromWire(value: unknown): DomainError {
    if (isWireError(value)) return new DomainError(value.code, value.message, value.details ?? []);
    return new DomainError('Internal', 'Internal error in a downstream service');
  }
}

export function isWireError(value: unknown): value is WireError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as WireError).message === 'string' &&
    (ERROR_CODES as readonly string[]).includes((value as WireError).code)
  );
}

/** HTTP status for each code; used by both HTTP interfaces. */
export const HTTP_STATUS_OF: Record<ErrorCode, number> = {
  ValidationFailed: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  MethodNotAllowed: 405,
  UnsupportedMediaType: 415,
  UriTooLong: 414,
  RequestHeaderFieldsTooLarge: 431,
  RequestTimeout: 408,
  Internal: 500,
  Unavailable: 503,
  Timeout: 504,
  // the edge's refusals, never answered over HTTP: the nearest status, so the mapping stays total
  InvalidFrame: 400,
  TooManyRequests: 429,
  NotRegistered: 409,
  AlreadyRegistered: 409,
  TokenInvalid: 401,
  TokenExpired: 401,
  ApplicationRefused: 403,
  TokenForAnotherClient: 403,
  NotJoined: 409,
  AlreadyJoined: 409,
  UnknownConnection: 404,
  InvalidTransition: 409,
  UnmuteDisabled: 403,
};

import { Type } from '@sinclair/typebox';

/** Interface B error body. */
export const ODataErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(
        ODATA_ERROR_CODES.map((c) => Type.Literal(c)),
        {
          description:
            'The failure kind: a refused query option answers `QuerySyntaxError`, `QueryLimitExceeded`, `UnknownProperty` or `ValidationFailed`.',
        },
      ),
      message: Type.String(),
      target: Type.Union([Type.String(), Type.Null()], { description: 'The offending query option or field' }),
      details: Type.Array(
        Type.Object({
          code: Type.Union(ODATA_ERROR_CODES.map((c) => Type.Literal(c))),
          message: Type.String(),
          target: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
    }),
  },
  { $id: 'ODataError', description: 'Interface B error body' },
);

/** Interface A error body (RFC 9457 problem details, plus `code` and `correlationId`). */
export const ProblemDetails = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String(),
    code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
    correlationId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.Optional(Type.String()), message: Type.String() }))),
  },
  { $id: 'ProblemDetails', description: 'Interface A error body (application/problem+json)' },
);
