import { encodeLiveSwitchClientToken, type ClaimsPayload } from '@switchboard/contracts';

export interface ClientTokenInput {
  applicationId: string;
  sharedSecret: string;
  claims: ClaimsPayload;
  /** Unix ms. */
  now: number;
  ttlSeconds: number;
}

/**
 * A `register` client token (http-contract.md, "Client edge") written byte for byte as LiveSwitch's
 * SDK writes one for the same claims and times (`encodeLiveSwitchClientToken`): absent claims left
 * out, its key orders, unpadded signature. `iat`/`exp` are Unix seconds.
 */
export function issueClientToken(input: ClientTokenInput): string {
  const iat = Math.floor(input.now / 1000);
  return encodeLiveSwitchClientToken(
    {
      type: 'register',
      iat,
      exp: iat + input.ttlSeconds,
      applicationId: input.applicationId,
      userId: input.claims.userId,
      deviceId: input.claims.deviceId,
      clientId: input.claims.clientId,
      clientRoles: input.claims.clientRoles,
      channels: input.claims.channelClaims,
    },
    input.sharedSecret,
  );
}
