import type { SyncErrorBody, SyncErrorCode } from '@switchboard/contracts';

export type { SyncErrorCode };
export type SyncErrorDetail = NonNullable<SyncErrorBody['details']>[number];

/** A request the gateway refused: `code` is the protocol's error code (docs/sync-protocol.md, "Error codes"). */
export class SyncError extends Error {
  override readonly name = 'SyncError';
  readonly code: SyncErrorCode;
  readonly details: SyncErrorDetail[];

  constructor(
    /** The request type refused (`join`, `connection.offer`, ...), or null for an unreadable frame. */
    readonly requestType: string | null,
    body: SyncErrorBody,
  ) {
    super(`${requestType ?? 'frame'}: ${body.code}: ${body.message}`);
    this.code = body.code;
    this.details = body.details ?? [];
  }
}

/**
 * What the SDK itself refuses or gives up on:
 * - `ConnectionLost`: the socket dropped before the answer came (the request may or may not have been applied);
 * - `RequestTimeout`: no answer within `requestTimeoutMs` (or the other side of a peer connection within `waitMs`);
 * - `Closed`: the client was closed, unregistered or could not resume;
 * - `NoPlatform`: no WebSocket or RTCPeerConnection given nor found on `globalThis`;
 * - `InvalidState`: called at the wrong time (e.g. `join` before `register`).
 */
export type ClientErrorCode = 'ConnectionLost' | 'RequestTimeout' | 'Closed' | 'NoPlatform' | 'InvalidState';

export class ClientError extends Error {
  override readonly name = 'ClientError';

  constructor(
    readonly code: ClientErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}
