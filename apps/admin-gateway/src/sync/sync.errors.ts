import {
  ContractViolation,
  DomainError,
  SYNC_CLOSE_CODES,
  type ErrorCode,
  type ErrorDetail,
  type SyncCloseCode,
  type SyncErrorBody,
  type SyncErrorCode,
} from '@switchboard/contracts';

/** How one DomainError code reaches a /sync client: the error frame's code, and the close a refused token brings. */
interface SyncFrameMapping {
  code: SyncErrorCode;
  closeCode?: SyncCloseCode;
}

/** Another service's failure is described by its logs, never to the client. */
const INTERNAL: SyncFrameMapping = { code: 'Internal' };

/** The one mapping of DomainError codes to /sync error frames (HTTP_STATUS_OF is the HTTP interfaces'). */
const SYNC_FRAME_OF: Record<ErrorCode, SyncFrameMapping> = {
  InvalidFrame: { code: 'InvalidFrame' },
  TooManyRequests: { code: 'TooManyRequests' },
  NotRegistered: { code: 'NotRegistered' },
  AlreadyRegistered: { code: 'AlreadyRegistered' },
  // An expired, tampered or wrong-application token closes the socket, at register and at join alike.
  TokenInvalid: { code: 'TokenInvalid', closeCode: SYNC_CLOSE_CODES.tokenInvalid },
  TokenExpired: { code: 'TokenExpired', closeCode: SYNC_CLOSE_CODES.tokenExpired },
  ApplicationRefused: { code: 'ApplicationRefused', closeCode: SYNC_CLOSE_CODES.applicationRefused },
  // A valid token of this application naming another client: refused, the socket stays open.
  TokenForAnotherClient: { code: 'TokenInvalid' },
  NotJoined: { code: 'NotJoined' },
  AlreadyJoined: { code: 'AlreadyJoined' },
  UnknownConnection: { code: 'UnknownConnection' },
  InvalidTransition: { code: 'InvalidTransition' },
  UnmuteDisabled: { code: 'UnmuteDisabled' },
  // Answers of runtime-registry and management-api keep their code.
  ValidationFailed: { code: 'ValidationFailed' },
  NotFound: { code: 'NotFound' },
  Conflict: { code: 'Conflict' },
  Unauthorized: { code: 'Unauthorized' },
  Forbidden: { code: 'Forbidden' },
  PayloadTooLarge: { code: 'PayloadTooLarge' },
  Unavailable: { code: 'Unavailable' },
  Timeout: { code: 'Timeout' },
  Internal: INTERNAL,
  // Refusals of an HTTP framework: no service answers the edge with them.
  MethodNotAllowed: INTERNAL,
  UnsupportedMediaType: INTERNAL,
  UriTooLong: INTERNAL,
  RequestHeaderFieldsTooLarge: INTERNAL,
  RequestTimeout: INTERNAL,
};

/** What the client gets for a failed request: the error frame's body, then a close when `closeCode` is set. */
export interface SyncRefusal {
  body: SyncErrorBody;
  closeCode?: SyncCloseCode;
}

const INTERNAL_BODY: SyncErrorBody = { code: 'Internal', message: 'An internal error occurred.' };

/** An error of a request as the /sync edge answers it; anything but a DomainError or ContractViolation is Internal. */
export function syncRefusal(error: unknown): SyncRefusal {
  if (error instanceof ContractViolation)
    return { body: errorBody('ValidationFailed', 'The request is invalid.', error.errors) };
  if (!(error instanceof DomainError)) return { body: INTERNAL_BODY };
  const { code, closeCode } = SYNC_FRAME_OF[error.code];
  if (code === 'Internal') return { body: INTERNAL_BODY };
  const body = errorBody(code, error.message, error.details);
  return closeCode === undefined ? { body } : { body, closeCode };
}

function errorBody(code: SyncErrorCode, message: string, details: ErrorDetail[]): SyncErrorBody {
  return details.length ? { code, message, details } : { code, message };
}
