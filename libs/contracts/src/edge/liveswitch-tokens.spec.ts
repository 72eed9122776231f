/**
 * Client tokens against LiveSwitch's own SDK (fixtures/liveswitch-tokens.json, see the README
 * there): the writer produces the same bytes, the codec accepts every one of them, stripped
 * signatures included, and refuses tampered ones.
 */
import { liveSwitchTokenVectors, liveSwitchVectorTimes, type LiveSwitchTokenVector } from '@switchboard/testing';
import {
  ClientTokenError,
  clientTokenSignatureValid,
  decodeClientToken,
  encodeLiveSwitchClientToken,
  liveSwitchPayloadJson,
  liveSwitchSecretKey,
  liveSwitchSignatureText,
  signClientTokenInput,
  type LiveSwitchTokenClaims,
} from './index.js';
import type { ChannelClaim } from '../interface-b/channel-claim.js';

const vectors = liveSwitchTokenVectors();

function claimsOf(vector: LiveSwitchTokenVector): LiveSwitchTokenClaims {
  return {
    type: vector.type,
    ...liveSwitchVectorTimes(vector),
    applicationId: vector.applicationId,
    userId: vector.claims.userId,
    deviceId: vector.claims.deviceId,
    clientId: vector.claims.clientId,
    region: vector.region,
    clientRoles: vector.claims.clientRoles,
    channels: vector.claims.channelClaims as ChannelClaim[] | undefined,
  };
}

/** Refused as malformed or for its signature: either way not valid. */
function valid(token: string, secret: string): boolean {
  try {
    return clientTokenSignatureValid(decodeClientToken(token), secret);
  } catch (e) {
    if (e instanceof ClientTokenError && e.reason === 'malformed') return false;
    throw e;
  }
}
const parts = (token: string) => token.split('.') as [string, string, string];

describe('LiveSwitch SDK token vectors', () => {
  it('cover register and join tokens, several secrets and several stripped signatures', () => {
    expect(vectors.length).toBeGreaterThan(50);
    expect(new Set(vectors.map((v) => v.type))).toEqual(new Set(['register', 'join']));
    expect(new Set(vectors.map((v) => v.sharedSecret)).size).toBeGreaterThan(2);
    const stripped = vectors.filter((v) => v.signatureStripped);
    expect(stripped.length).toBeGreaterThanOrEqual(5);
    for (const v of stripped) expect(parts(v.token)[2]).toHaveLength(42);
  });

  const utf8Keyed = vectors.filter((v) => !v.sdkSurrogateKey);
  it.each(utf8Keyed.map((v, i) => [`${i} ${v.name}`, v] as const))('writes %s byte for byte', (_, vector) => {
    expect(encodeLiveSwitchClientToken(claimsOf(vector), vector.sharedSecret)).toBe(vector.token);
  });

  it('writes header and payload as the SDK does when its key bytes are not UTF-8, and signs with UTF-8 as the contract says', () => {
    const surrogateKeyed = vectors.filter((v) => v.sdkSurrogateKey);
    expect(surrogateKeyed.length).toBeGreaterThan(0);
    for (const vector of surrogateKeyed) {
      const [header, payload, signature] = parts(encodeLiveSwitchClientToken(claimsOf(vector), vector.sharedSecret));
      expect(`${header}.${payload}`).toBe(vector.token.split('.').slice(0, 2).join('.'));
      expect(signature).toBe(
        liveSwitchSignatureText(signClientTokenInput(`${header}.${payload}`, Buffer.from(vector.sharedSecret, 'utf8'))),
      );
      expect(parts(vector.token)[2]).toBe(
        liveSwitchSignatureText(signClientTokenInput(`${header}.${payload}`, liveSwitchSecretKey(vector.sharedSecret))),
      );
      expect(valid(`${header}.${payload}.${signature}`, vector.sharedSecret)).toBe(true);
    }
  });

  it.each(vectors.map((v, i) => [`${i} ${v.name}`, v] as const))('accepts %s', (_, vector) => {
    const decoded = decodeClientToken(vector.token);
    expect(decoded.payload).toEqual(JSON.parse(liveSwitchPayloadJson(claimsOf(vector))));
    expect(clientTokenSignatureValid(decoded, vector.sharedSecret)).toBe(true);
    expect(clientTokenSignatureValid(decoded, `${vector.sharedSecret}x`)).toBe(false);
  });

  it('accepts the same signature padded, unpadded and in base64url, with its final A or without it', () => {
    for (const vector of vectors.filter((v) => v.signatureStripped)) {
      const [header, payload, stripped] = parts(vector.token);
      const full = signClientTokenInput(`${header}.${payload}`, vector.sharedSecret);
      expect(full.toString('base64')).toBe(`${stripped}A=`);
      for (const signature of [
        `${stripped}A`,
        `${stripped}A=`,
        full.toString('base64url'),
        `${full.toString('base64url')}=`,
      ]) {
        expect(valid(`${header}.${payload}.${signature}`, vector.sharedSecret)).toBe(true);
      }
    }
  });

  describe('refuses tampered tokens', () => {
    const stripped = vectors.filter((v) => v.signatureStripped);
    const whole = vectors.filter((v) => !v.signatureStripped);

    it('a payload changed under the same signature', () => {
      for (const vector of [stripped[0]!, whole[0]!]) {
        const [header, payload, signature] = parts(vector.token);
        const changed = Buffer.from(
          Buffer.from(payload, 'base64').toString('utf8').replace(`"iat":`, `"iat":1`),
          'utf8',
        ).toString('base64');
        expect(valid(`${header}.${changed}.${signature}`, vector.sharedSecret)).toBe(false);
      }
    });

    it('a signature with one character changed, wherever it is', () => {
      for (const vector of [...stripped.slice(0, 3), ...whole.slice(0, 3)]) {
        const [header, payload, signature] = parts(vector.token);
        for (const at of [0, 20, signature.length - 1]) {
          const replacement = signature[at] === 'B' ? 'C' : 'B';
          const changed = signature.slice(0, at) + replacement + signature.slice(at + 1);
          expect(valid(`${header}.${payload}.${changed}`, vector.sharedSecret)).toBe(false);
        }
      }
    });

    it('a stripped signature missing a character other than the trailing A', () => {
      for (const vector of stripped) {
        const [header, payload, signature] = parts(vector.token);
        for (const at of [0, 17, signature.length - 1]) {
          const shorter = signature.slice(0, at) + signature.slice(at + 1);
          expect(valid(`${header}.${payload}.${shorter}`, vector.sharedSecret)).toBe(false);
        }
        // Base64 bits beyond the 32 bytes are not ignored either.
        expect(valid(`${header}.${payload}.${signature}B`, vector.sharedSecret)).toBe(false);
      }
    });

    it('more trailing As stripped than the SDK strips, or As added', () => {
      const vector = whole[0]!;
      // Find an iat whose signature ends in "AA": the SDK strips one A, never both.
      let claims = claimsOf(vector);
      let token = encodeLiveSwitchClientToken(claims, vector.sharedSecret);
      for (let step = 1; !signatureOf(token, vector.sharedSecret).endsWith('AA='); step++) {
        claims = { ...claims, iat: claims.iat + step, exp: claims.exp + step };
        token = encodeLiveSwitchClientToken(claims, vector.sharedSecret);
      }
      const [header, payload, signature] = parts(token);
      expect(signature).toHaveLength(42);
      expect(signature.endsWith('A')).toBe(true);
      expect(valid(token, vector.sharedSecret)).toBe(true);
      expect(valid(`${header}.${payload}.${signature.slice(0, -1)}`, vector.sharedSecret)).toBe(false);
      expect(valid(`${header}.${payload}.${signature}A`, vector.sharedSecret)).toBe(true);
      expect(valid(`${header}.${payload}.${signature}AA`, vector.sharedSecret)).toBe(false);
      expect(valid(`${whole[1]!.token}A`, whole[1]!.sharedSecret)).toBe(false);
    });
  });
});

function signatureOf(token: string, secret: string): string {
  const [header, payload] = parts(token);
  return signClientTokenInput(`${header}.${payload}`, secret).toString('base64');
}
