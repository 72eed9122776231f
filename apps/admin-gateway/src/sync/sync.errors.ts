import {
  ContractViolation,
  DomainError,
  SYNC_ERROR_CODES,
  type ErrorDetail,
  type SyncErrorBody,
  type SyncErrorCode,
} from '@switchboard/contracts';

/** A refused request of the client edge: an `error` frame, and a close when `closeCode` is set. */
export class SyncError extends Error {
  override readonly name = 'SyncError';
  constructor(
    readonly code: SyncErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** Close the socket with this code after the error frame (a refused register or join token). */
    readonly closeCode?: number,
  ) {
    super(message);
  }

  toBody(): SyncErrorBody {
    return this.details.length
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }

  /** Registry answers keep their code (NotFound, Conflict, Unavailable, Timeout, ...); anything else is Internal. */
  static from(error: unknown): SyncError {
    if (error instanceof SyncError) return error;
    if (error instanceof DomainError) {
      // Another service's internal failure is its logs' business, not the client's.
      // The HTTP framework's own codes (UnsupportedMediaType, UriTooLong, ...) never come from the registry.
      const known = error.code !== 'Internal' && (SYNC_ERROR_CODES as readonly string[]).includes(error.code);
      return known
        ? new SyncError(error.code as SyncErrorCode, error.message, error.details)
        : new SyncError('Internal', 'An internal error occurred.');
    }
    if (error instanceof ContractViolation)
      return new SyncError('ValidationFailed', 'The request is invalid.', error.errors);
    return new SyncError('Internal', 'An internal error occurred.');
  }
}
