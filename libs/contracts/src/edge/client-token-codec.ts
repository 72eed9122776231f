/**
 * The client token codec (http-contract.md, "Client edge"): `header.payload.signature`, HS256 —
 * HMAC-SHA256 over the ASCII bytes of `header.payload` as sent, keyed with the UTF-8 bytes of the
 * application's `sharedSecret`. Header and payload are JSON in Base64: the standard alphabet, as
 * LiveSwitch's SDK writes them (liveswitch-token-writer.ts writes its exact bytes); base64url and
 * padded or unpadded forms are accepted too. The alphabets are not mixed inside one segment.
 *
 * Node built-ins only, so every service and tool can share it: management-api issues tokens, the
 * gateway verifies them, tests and the simulator sign their own.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { validator, type FieldError } from '../validation/validate.js';
import { ClientTokenPayload } from '../webhooks/client-token.js';

export type ClientTokenEncoding = 'base64' | 'base64url';

export const CLIENT_TOKEN_HEADER = { alg: 'HS256', typ: 'JWT' } as const;
/** Longest token accepted (a generous bound: a token carries at most a few hundred claims). */
export const CLIENT_TOKEN_MAX_LENGTH = 16384;

export type ClientTokenFailure =
  'malformed' | 'unsupported-algorithm' | 'invalid-payload' | 'bad-signature' | 'expired' | 'not-yet-valid';

export class ClientTokenError extends Error {
  override readonly name = 'ClientTokenError';
  constructor(
    readonly reason: ClientTokenFailure,
    message: string,
    readonly details: FieldError[] = [],
  ) {
    super(message);
  }
}

export interface DecodedClientToken {
  /** `header.payload` exactly as sent: the bytes the signature covers. */
  signingInput: string;
  signature: Buffer;
  /** The signature segment as sent: clientTokenSignatureValid compares it as text. */
  signatureText: string;
  header: Record<string, unknown>;
  payload: ClientTokenPayload;
}

const STANDARD = /^[A-Za-z0-9+/]+={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]+={0,2}$/;
const payloadValidator = validator(ClientTokenPayload);

function encodeSegment(bytes: Buffer, encoding: ClientTokenEncoding): string {
  return bytes.toString(encoding);
}

/** Strict Base64 / base64url decoding: anything `Buffer.from` would silently skip is refused. */
export function decodeBase64Segment(segment: string): Buffer | undefined {
  const encoding = STANDARD.test(segment) ? 'base64' : URL_SAFE.test(segment) ? 'base64url' : undefined;
  if (!encoding) return undefined;
  let end = segment.length;
  while (end > 0 && segment.charCodeAt(end - 1) === 0x3d /* = */) end--;
  if (end % 4 === 1) return undefined;
  if (end < segment.length && segment.length % 4 !== 0) return undefined;
  return Buffer.from(end < segment.length ? segment.slice(0, end) : segment, encoding);
}

/**
 * HMAC-SHA256 of the signing input with the shared secret. The secret goes in as a string (Node
 * takes its UTF-8 bytes, the same key): on Node 24 a Buffer key costs several times more per call.
 */
export function signClientTokenInput(signingInput: string, sharedSecret: string | Buffer): Buffer {
  return createHmac('sha256', sharedSecret).update(signingInput, 'ascii').digest();
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The key bytes LiveSwitch's JavaScript SDK signs with: each UTF-16 unit encoded on its own, so a
 * character outside the BMP becomes two 3-byte surrogates instead of UTF-8's 4 bytes. Equal to the
 * UTF-8 bytes for every secret without such characters.
 */
export function liveSwitchSecretKey(sharedSecret: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < sharedSecret.length; i++) {
    const unit = sharedSecret.charCodeAt(i);
    if (unit < 0x80) bytes.push(unit);
    else if (unit < 0x800) bytes.push(0xc0 | (unit >> 6), 0x80 | (unit & 63));
    else bytes.push(0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 63), 0x80 | (unit & 63));
  }
  return Buffer.from(bytes);
}

/** Builds a token (standard padded Base64 unless `encoding` says base64url). */
export function encodeClientToken(
  payload: ClientTokenPayload,
  sharedSecret: string,
  encoding: ClientTokenEncoding = 'base64',
): string {
  const header = encodeSegment(Buffer.from(JSON.stringify(CLIENT_TOKEN_HEADER), 'utf8'), encoding);
  const body = encodeSegment(Buffer.from(JSON.stringify(payload), 'utf8'), encoding);
  const signingInput = `${header}.${body}`;
  return `${signingInput}.${encodeSegment(signClientTokenInput(signingInput, sharedSecret), encoding)}`;
}

function parseJsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ClientTokenError('malformed', `The token ${what} is not JSON.`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new ClientTokenError('malformed', `The token ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

/**
 * Splits and decodes a token without checking its signature (the key depends on the payload's
 * `applicationId`). Throws ClientTokenError: `malformed`, `unsupported-algorithm`, `invalid-payload`.
 */
export function decodeClientToken(token: string, maxLength = CLIENT_TOKEN_MAX_LENGTH): DecodedClientToken {
  if (typeof token !== 'string' || token.length === 0) throw new ClientTokenError('malformed', 'The token is empty.');
  if (token.length > maxLength)
    throw new ClientTokenError('malformed', `The token is longer than ${maxLength} characters.`);
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => p.length === 0))
    throw new ClientTokenError('malformed', 'The token is not of the form header.payload.signature.');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const headerBytes = decodeBase64Segment(headerPart);
  const payloadBytes = decodeBase64Segment(payloadPart);
  const signature = decodeBase64Segment(signaturePart);
  if (!headerBytes || !payloadBytes || !signature)
    throw new ClientTokenError('malformed', 'A token segment is not Base64.');
  const header = parseJsonObject(headerBytes, 'header');
  if (header.alg !== 'HS256')
    throw new ClientTokenError('unsupported-algorithm', 'The token must be signed with HS256.');
  const payload = parseJsonObject(payloadBytes, 'payload');
  const errors = payloadValidator.check(payload) ? [] : payloadValidator.errors(payload);
  if (errors.length) throw new ClientTokenError('invalid-payload', 'The token payload is invalid.', errors);
  return {
    signingInput: `${headerPart}.${payloadPart}`,
    signature,
    signatureText: signaturePart,
    header,
    payload: payload as ClientTokenPayload,
  };
}

/**
 * Constant-time check of the HS256 signature with the application's shared secret. The segment is
 * compared as text with the encodings of the expected signature (exact: no other bits or padding
 * slip through): standard Base64 or base64url, padded or not, and the form LiveSwitch's SDK writes
 * when it strips a final `A` with the padding (liveSwitchSignatureText); keyed with the UTF-8
 * bytes of the secret or, for tokens the SDK signed, its own key bytes (liveSwitchSecretKey).
 */
export function clientTokenSignatureValid(decoded: DecodedClientToken, sharedSecret: string): boolean {
  if (signatureMatches(decoded, signClientTokenInput(decoded.signingInput, sharedSecret))) return true;
  // The SDK's own key bytes differ from UTF-8 only for secrets with characters outside the BMP.
  return (
    SURROGATE.test(sharedSecret) &&
    signatureMatches(decoded, signClientTokenInput(decoded.signingInput, liveSwitchSecretKey(sharedSecret)))
  );
}

function signatureMatches(decoded: DecodedClientToken, expected: Buffer): boolean {
  const standard = expected.toString('base64');
  const unpadded = standard.replace(/=+$/, '');
  const urlSafe = expected.toString('base64url');
  const accepted = [standard, unpadded, urlSafe, urlSafe + standard.slice(unpadded.length)];
  if (unpadded.endsWith('A')) accepted.push(unpadded.slice(0, -1));
  let valid = false;
  for (const form of accepted) valid = sameText(decoded.signatureText, form) || valid;
  return valid;
}

function sameText(given: string, expected: string): boolean {
  return (
    given.length === expected.length && timingSafeEqual(Buffer.from(given, 'latin1'), Buffer.from(expected, 'latin1'))
  );
}

/** `exp` in the past, `iat` or `nbf` in the future (beyond `skewSeconds`), or `exp` before `iat`: throws. */
export function checkClientTokenTimes(payload: ClientTokenPayload, nowSeconds: number, skewSeconds: number): void {
  if (payload.exp < payload.iat)
    throw new ClientTokenError('invalid-payload', 'The token expires before it was issued.', [
      { field: 'exp', message: 'must not be before iat' },
    ]);
  if (nowSeconds > payload.exp + skewSeconds) throw new ClientTokenError('expired', 'The token has expired.');
  if (payload.iat > nowSeconds + skewSeconds)
    throw new ClientTokenError('not-yet-valid', 'The token is not valid yet (iat is in the future).');
  if (payload.nbf !== undefined && payload.nbf > nowSeconds + skewSeconds)
    throw new ClientTokenError('not-yet-valid', 'The token is not valid yet (nbf is in the future).');
}
