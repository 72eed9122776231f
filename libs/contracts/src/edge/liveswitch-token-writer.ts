/**
 * Writes client tokens byte for byte as LiveSwitch's client SDK does (`fm.liveswitch`,
 * `Token.generateClientRegisterToken` / `generateClientJoinToken`; vectors in
 * fixtures/liveswitch-tokens.json): its payload key order, absent claims left out, channel claims
 * in its fixed key order with only `true` flags, its string escaping, and its signature encoding.
 */
import type { ChannelClaim } from '../interface-b/channel-claim.js';
import type { ClientTokenType } from '../webhooks/client-token.js';
import { signClientTokenInput } from './client-token-codec.js';

export interface LiveSwitchTokenClaims {
  type: ClientTokenType;
  /** Unix seconds. */
  iat: number;
  /** Unix seconds. */
  exp: number;
  applicationId: string;
  userId?: string | null;
  deviceId?: string | null;
  clientId?: string | null;
  region?: string | null;
  clientRoles?: readonly string[] | null;
  channels?: readonly ChannelClaim[] | null;
}

/** `{"alg":"HS256","typ":"JWT"}` as the SDK writes it. */
const HEADER_SEGMENT = Buffer.from('{"alg":"HS256","typ":"JWT"}', 'utf8').toString('base64');

const BEFORE_ACTION_FLAGS = [
  'disableSendMessage',
  'disablePeer',
  'disableSfu',
  'disableMcu',
  'disableSendAudio',
  'disableSendVideo',
  'disableSendData',
  'disableRemoteClientEvents',
  'disableRemoteUpstreamConnectionEvents',
] as const;
const WHITELISTS = ['audioReceiveWhitelist', 'videoReceiveWhitelist', 'dataReceiveWhitelist'] as const;
const AFTER_ACTION_FLAGS = ['canKick', 'canUpdate', 'enableHiddenObserverMode', 'canUpdateLayout'] as const;
/** The SDK's channel claim has no action unset: its constructor sets this one. */
const DEFAULT_CLAIM_ACTION = 'join';

/** The SDK's JSON string: `/` escaped, every UTF-16 unit above `~` as `\uxxxx` (lowercase hex). */
export function liveSwitchJsonString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const ch = value[i]!;
    if (code > 126 || code < 32) {
      const named = NAMED_ESCAPES[ch];
      // Other control characters: the SDK writes them raw (invalid JSON); \u00xx keeps the token readable.
      out += named ?? `\\u${code.toString(16).padStart(4, '0')}`;
    } else if (ch === '"' || ch === '\\' || ch === '/') out += `\\${ch}`;
    else out += ch;
  }
  return `${out}"`;
}
const NAMED_ESCAPES: Record<string, string> = { '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const stringArray = (values: readonly string[]) => `[${values.map(liveSwitchJsonString).join(',')}]`;

function channelClaimJson(claim: ChannelClaim): string {
  const fields = [`"id":${claim.id == null ? 'null' : liveSwitchJsonString(claim.id)}`];
  for (const flag of BEFORE_ACTION_FLAGS) if (claim[flag] === true) fields.push(`"${flag}":true`);
  for (const list of WHITELISTS) if (claim[list] != null) fields.push(`"${list}":${stringArray(claim[list])}`);
  fields.push(`"action":${liveSwitchJsonString(claim.action ?? DEFAULT_CLAIM_ACTION)}`);
  for (const flag of AFTER_ACTION_FLAGS) if (claim[flag] === true) fields.push(`"${flag}":true`);
  if (claim.allowedLayoutPriority != null)
    fields.push(`"allowedLayoutPriority":${JSON.stringify(claim.allowedLayoutPriority)}`);
  if (claim.allowedLayoutZones != null) fields.push(`"allowedLayoutZones":${stringArray(claim.allowedLayoutZones)}`);
  // Not in LiveSwitch's token format (its SDK never writes it); kept last so the claim survives.
  if (claim.broadcast === true) fields.push('"broadcast":true');
  return `{${fields.join(',')}}`;
}

/** The payload JSON in the SDK's key order; null or absent claims are left out. */
export function liveSwitchPayloadJson(claims: LiveSwitchTokenClaims): string {
  const fields = [
    `"iat":${claims.iat}`,
    `"exp":${claims.exp}`,
    `"type":${liveSwitchJsonString(claims.type)}`,
    `"applicationId":${liveSwitchJsonString(claims.applicationId)}`,
  ];
  for (const key of ['userId', 'deviceId', 'clientId', 'region'] as const) {
    const value = claims[key];
    if (value != null) fields.push(`"${key}":${liveSwitchJsonString(value)}`);
  }
  if (claims.clientRoles != null) fields.push(`"clientRoles":${stringArray(claims.clientRoles)}`);
  if (claims.channels != null) fields.push(`"channels":[${claims.channels.map(channelClaimJson).join(',')}]`);
  return `{${fields.join(',')}}`;
}

/**
 * The signature as the SDK writes it: standard Base64 with the `=` trimmed. Its encoder turns a
 * final `A` into padding before the trim, so when the last character is `A` (1 token in 16) it is
 * dropped too; clientTokenSignatureValid accepts exactly that form.
 */
export function liveSwitchSignatureText(signature: Buffer): string {
  const unpadded = signature.toString('base64').replace(/=+$/, '');
  return unpadded.endsWith('A') && signature.length % 3 !== 0 ? unpadded.slice(0, -1) : unpadded;
}

/** A client token exactly as `fm.liveswitch` writes it for the same claims and times. */
export function encodeLiveSwitchClientToken(claims: LiveSwitchTokenClaims, sharedSecret: string): string {
  const signingInput = `${HEADER_SEGMENT}.${Buffer.from(liveSwitchPayloadJson(claims), 'utf8').toString('base64')}`;
  return `${signingInput}.${liveSwitchSignatureText(signClientTokenInput(signingInput, sharedSecret))}`;
}
