/**
 * Client tokens written by LiveSwitch's own SDK (libs/contracts/src/edge/fixtures/, README there):
 * the fixture's entries and the claims each was written for, for the token tests of every package.
 */
import { readFileSync } from 'node:fs';

export interface LiveSwitchChannelClaim {
  id?: string | null;
  [field: string]: unknown;
}

export interface LiveSwitchTokenVector {
  name: string;
  type: 'register' | 'join';
  applicationId: string;
  sharedSecret: string;
  /** The SDK's clock when it wrote the token, Unix ms. */
  now: number;
  /** The expiration time given to the SDK, Unix seconds (absent: its default, 120 s after `now`). */
  expiresAt?: number;
  region?: string;
  /** The claims payload (Token action body) the SDK was given. */
  claims: {
    userId?: string;
    deviceId?: string;
    clientId?: string;
    clientRoles?: string[];
    channelClaims?: LiveSwitchChannelClaim[];
  };
  token: string;
  /** The SDK dropped the signature's final `A` with its padding (42 characters). */
  signatureStripped: boolean;
  /** Secret with a character outside the BMP: the SDK keys its HMAC with its own bytes, not UTF-8. */
  sdkSurrogateKey?: boolean;
}

const FIXTURE = new URL('../../contracts/src/edge/fixtures/liveswitch-tokens.json', import.meta.url);

export function liveSwitchTokenVectors(): LiveSwitchTokenVector[] {
  return (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { vectors: LiveSwitchTokenVector[] }).vectors;
}

/** `iat` and `exp` (Unix seconds) the SDK wrote into a vector's token. */
export function liveSwitchVectorTimes(vector: LiveSwitchTokenVector): { iat: number; exp: number } {
  const iat = Math.floor(vector.now / 1000);
  return { iat, exp: vector.expiresAt ?? iat + 120 };
}
