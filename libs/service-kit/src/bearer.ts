import { DomainError, isUuid, type CallerScope } from '@switchboard/contracts';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';

export interface BearerSettings {
  readonly oauthIssuer?: string | undefined;
  readonly oauthAudience?: string | undefined;
  readonly oauthJwksUrl?: string | undefined;
  readonly oauthOperatorScope: string;
  readonly oauthOrganizationClaim: string;
}

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined when the header is absent or
 * names another scheme. The scheme name is case-insensitive (RFC 9110 section 11.1): `bearer x`
 * and `BEARER x` carry the token `x` as `Bearer x` does.
 */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  if (typeof header !== 'string') return undefined;
  const scheme = /^bearer[ \t]+/i.exec(header);
  return scheme ? header.slice(scheme[0].length).trim() : undefined;
}

/**
 * Organization ids are UUIDs, stored lower-cased; an issuer may spell the claim in upper case. The
 * same organization must scope the caller alike on both interfaces (the registry compares ids as
 * strings), so a UUID-shaped claim is lower-cased; anything else is kept for the caller to refuse.
 */
function canonicalOrganization(claim: string): string {
  return isUuid(claim) ? claim.toLowerCase() : claim;
}

/**
 * OAuth2 access tokens (JWT) checked against the configured issuer's JWKS, audience and expiry.
 * The organization comes from a configurable claim; the operator scope makes an operator credential.
 * The JWKS is fetched once and refreshed on an unknown key id (jose's remote key set).
 */
export class BearerVerifier {
  private readonly jwks?: JWTVerifyGetKey;

  constructor(private readonly settings: BearerSettings) {
    if (settings.oauthJwksUrl)
      this.jwks = createRemoteJWKSet(new URL(settings.oauthJwksUrl), {
        cooldownDuration: 30000,
        timeoutDuration: 5000,
      });
  }

  get enabled(): boolean {
    return this.jwks !== undefined;
  }

  async verify(token: string): Promise<CallerScope> {
    if (!this.jwks) throw new DomainError('Unauthorized', 'Bearer tokens are not accepted by this deployment.');
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        issuer: this.settings.oauthIssuer,
        audience: this.settings.oauthAudience,
        algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
        // jose checks `exp` only when present: a token without one would never expire.
        requiredClaims: ['exp'],
      });
      const scopes =
        typeof payload.scope === 'string'
          ? payload.scope.split(' ')
          : Array.isArray(payload.scp)
            ? (payload.scp as string[])
            : [];
      const operator = scopes.includes(this.settings.oauthOperatorScope);
      const org = payload[this.settings.oauthOrganizationClaim];
      if (!operator && typeof org !== 'string') throw new DomainError('Forbidden', 'The token names no organization.');
      return {
        organizationId: typeof org === 'string' ? canonicalOrganization(org) : null,
        operator,
        principal: payload.sub ?? 'oauth2',
      };
    } catch (e) {
      if (e instanceof DomainError) throw e;
      if (e instanceof joseErrors.JWKSTimeout)
        throw new DomainError('Unavailable', 'The token issuer cannot be reached.');
      throw new DomainError('Unauthorized', 'The bearer token is not valid.');
    }
  }
}
