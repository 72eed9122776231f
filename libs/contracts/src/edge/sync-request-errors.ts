/**
 * The error codes each `/sync` request can be answered with, and when, as read from the gateway
 * (apps/admin-gateway/src/sync, src/media) and the registry answers it passes through. Published in
 * the AsyncAPI document (sync-asyncapi.ts) and docs/sync-protocol.md.
 */
import { SYNC_CLOSE_CODES, type SyncCloseCode, type SyncErrorCode, type SyncRequestType } from './sync-frames.js';

export interface SyncRefusalCase {
  /** When the request gets this code. */
  when: string;
  /** The socket closes with this code right after the error frame. */
  closeCode?: SyncCloseCode;
}
export type SyncRefusals = Partial<Record<SyncErrorCode, SyncRefusalCase>>;

/** Any request may get these (a frame refused as it is read, or a failure nobody planned for). */
export const SYNC_ANY_REQUEST_ERRORS: SyncRefusals = {
  InvalidFrame: { when: 'The frame is not a request: unknown `type`, bad `id`, unknown envelope fields.' },
  ValidationFailed: { when: '`data` breaks the schema of the request; `details` name each field (`data.<field>`).' },
  TooManyRequests: {
    when: 'More than `SYNC_MAX_PENDING_REQUESTS` requests wait on the socket; answered at once. Retry later.',
  },
  Internal: { when: 'An unexpected failure behind the edge; never with details.' },
};

const notRegistered: SyncRefusals = { NotRegistered: { when: 'No `register` succeeded on this socket yet.' } };
/** A request reported to runtime-registry may get its refusal or a transport failure. */
const registry: SyncRefusals = {
  NotFound: { when: 'The registry no longer holds the client, channel membership or connection (removed meanwhile).' },
  Unavailable: { when: 'runtime-registry (or Redis, NATS) is restarting: retry.' },
  Timeout: { when: 'runtime-registry did not answer in time: retry (the reconcile undoes a half-applied change).' },
};
const unknownConnection: SyncRefusals = {
  UnknownConnection: { when: 'The client has no open connection with this `connectionId`.' },
};
const signalling = (notApplicable: string): SyncRefusals => ({
  ...notRegistered,
  ...unknownConnection,
  ValidationFailed: { when: notApplicable },
  NotFound: { when: 'The media server no longer has the room, or the upstream is not publishing on it.' },
  Unavailable: { when: "The connection's media-agent does not answer (Janus restarting, or a simulated server)." },
  Timeout: { when: 'No answer of the media server within `MEDIA_SIGNALLING_TIMEOUT_MS`.' },
  Internal: { when: 'Janus refused the request.' },
});
const tokenRefusals = (at: string): SyncRefusals => ({
  TokenInvalid: {
    when: `The ${at} token is malformed, not HS256, of the wrong type, breaks the payload contract, or its signature does not match.`,
    closeCode: SYNC_CLOSE_CODES.tokenInvalid,
  },
  TokenExpired: {
    when: `The ${at} token's \`exp\` passed, or its \`iat\`/\`nbf\` is in the future (beyond the clock skew).`,
    closeCode: SYNC_CLOSE_CODES.tokenExpired,
  },
  ApplicationRefused: {
    when: "The token's application is unknown or disabled (or its organization), or not the one asked for.",
    closeCode: SYNC_CLOSE_CODES.applicationRefused,
  },
});

/** What each request type can be answered with, beyond SYNC_ANY_REQUEST_ERRORS. */
export const SYNC_REQUEST_ERRORS: Record<SyncRequestType, SyncRefusals> = {
  register: {
    AlreadyRegistered: { when: 'This socket registered already.' },
    ...tokenRefusals('register'),
    Unavailable: {
      when:
        'management-api or runtime-registry unreachable, or the previous session of the client is still being ' +
        'unregistered: retry `register` (the socket stays open).',
    },
    Timeout: { when: 'management-api or runtime-registry slow: retry `register`.' },
    ValidationFailed: { when: 'The registry refused the registration (a field it cannot store); `details` name it.' },
  },
  join: {
    ...notRegistered,
    AlreadyJoined: { when: 'The client is in the channel already.' },
    Forbidden: { when: 'The claims (of the register token, or of the join `token`) hold no claim for the channel.' },
    ...tokenRefusals('join'),
    // Replaces the one of tokenRefusals: a valid token naming another client keeps the socket open.
    TokenInvalid: {
      when:
        'The join `token` is bad (then close 4001, as at register), or valid but names another user, device or ' +
        'client (`details` name the field; the socket stays open).',
    },
    ...registry,
  },
  leave: { ...notRegistered, NotJoined: { when: 'The client is not in the channel.' }, ...registry },
  'connection.open': {
    ...notRegistered,
    NotJoined: { when: 'The client is not in the channel (or was kicked out of it while the open was handled).' },
    Forbidden: {
      when: 'The claim disables this connection type, or sending a stream the `streams` send; `details` name the field.',
    },
    Conflict: { when: 'The `connectionId` is in use.' },
    ...registry,
    Unavailable: {
      when:
        'No media server available for an `sfu` or `mcu` connection: retrying helps only when one comes back ' +
        '(the error message says so). Otherwise runtime-registry is restarting: retry.',
    },
  },
  'connection.state': {
    ...notRegistered,
    ...unknownConnection,
    InvalidTransition: { when: 'The state machine does not allow it; `details` list the states that may follow.' },
    Conflict: {
      when: 'The registry holds another state: e.g. `connected` reported before the media server said so.',
    },
    ...registry,
  },
  'connection.update': {
    ...notRegistered,
    ...unknownConnection,
    UnmuteDisabled: { when: 'Unmuting a muted kind while unmuting it is disabled; `details` name the field.' },
    Forbidden: { when: 'The claim disables sending a stream the new `streams` send.' },
    ...registry,
    Unavailable: { when: 'The settings of the connection kept changing, or runtime-registry is restarting: retry.' },
  },
  'connection.close': { ...notRegistered, ...unknownConnection, ...registry },
  'connection.offer': signalling(
    'The connection is not placed on a media server (`peer`), is a downstream one (it receives the offer), ' +
      'or the media server refused the SDP.',
  ),
  'connection.subscribe': signalling(
    'The connection is not a downstream `sfu` connection (naming a `remoteConnectionId`) placed on a media server.',
  ),
  'connection.answer': signalling(
    'The connection is not a downstream `sfu` connection placed on a media server, or the SDP is refused.',
  ),
  'connection.candidates': signalling('The connection is not placed on a media server (`peer`).'),
  'connection.relay': {
    ...notRegistered,
    ...unknownConnection,
    ValidationFailed: {
      when:
        'Not a `peer` connection, none or several of `offer`/`answer`/`candidates`, no `remoteConnectionId`, or ' +
        'the remote connection does not name this one back.',
    },
    NotFound: { when: 'The remote peer connection is not open in the channel.' },
    ...registry,
  },
  stats: { ...notRegistered, ...unknownConnection, ...registry },
  message: {
    ...notRegistered,
    NotJoined: { when: 'The client is not in the channel.' },
    Forbidden: { when: 'The claim says `disableSendMessage`.' },
    ...registry,
  },
  'client.update': { ...notRegistered, ...registry },
  unregister: { ...notRegistered },
  ping: {},
};
