import { encodeClientToken, validator, ClientTokenPayload, type ClaimsPayload } from '@switchboard/contracts';

const checkPayload = validator(ClientTokenPayload);

export interface ClientTokenInput {
  applicationId: string;
  sharedSecret: string;
  claims: ClaimsPayload;
  /** Unix ms. */
  now: number;
  ttlSeconds: number;
}

/**
 * A `register` client token (http-contract.md, "Client edge"), written with the shared codec
 * (`encodeClientToken`, the one the gateway verifies with): header `{"alg":"HS256","typ":"JWT"}`,
 * standard padded Base64, HMAC-SHA256 over `header.payload` keyed with the UTF-8 bytes of the
 * application's shared secret. `iat`/`exp` are Unix seconds; `channels` are the channel claims.
 */
export function issueClientToken(input: ClientTokenInput): string {
  const iat = Math.floor(input.now / 1000);
  const payload = checkPayload.parse({
    iat,
    exp: iat + input.ttlSeconds,
    type: 'register',
    applicationId: input.applicationId,
    userId: input.claims.userId ?? null,
    deviceId: input.claims.deviceId ?? null,
    clientId: input.claims.clientId ?? null,
    clientRoles: input.claims.clientRoles ?? null,
    channels: input.claims.channelClaims ?? null,
  });
  return encodeClientToken(payload, input.sharedSecret, 'base64');
}
