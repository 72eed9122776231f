import { ConfigError, cidrList, commonSettings, int, loadConfig, str, url, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8080),
  adminCidrAllowlist: cidrList('ADMIN_CIDR_ALLOWLIST', ['127.0.0.1/32', '::1/128'], 'Comma-separated CIDR blocks allowed to call the admin API (others: 403)'),
  apiKeyCacheTtlMs: int({ env: 'API_KEY_CACHE_TTL_MS', default: 10000, min: 0, max: 300000, description: 'How long a verified API key is remembered by a gateway replica' }),
  apiKeyNegativeCacheTtlMs: int({ env: 'API_KEY_NEGATIVE_CACHE_TTL_MS', default: 2000, min: 0, max: 60000, description: 'How long a rejected API key is remembered' }),
  oauthIssuer: str({ env: 'OAUTH_ISSUER', optional: true, description: 'Issuer (iss) of accepted OAuth2 access tokens; set with OAUTH_AUDIENCE and OAUTH_JWKS_URL to enable Bearer tokens' }),
  oauthAudience: str({ env: 'OAUTH_AUDIENCE', optional: true, description: 'Audience (aud) accepted OAuth2 access tokens must carry' }),
  oauthJwksUrl: url({ env: 'OAUTH_JWKS_URL', optional: true, protocols: ['https', 'http'], description: 'JWKS URL of the OAuth2 issuer' }),
  oauthOperatorScope: str({ env: 'OAUTH_OPERATOR_SCOPE', default: 'switchboard:operator', description: 'Scope that makes a Bearer token an operator credential' }),
  oauthOrganizationClaim: str({ env: 'OAUTH_ORGANIZATION_CLAIM', default: 'org_id', description: 'Claim of a Bearer token holding the organization id' }),
};

export type GatewayConfig = ConfigOf<typeof settings>;

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const config = loadConfig(settings, env);
  const oauth = [config.oauthIssuer, config.oauthAudience, config.oauthJwksUrl];
  if (oauth.some(Boolean) && !oauth.every(Boolean)) {
    const missing = (['OAUTH_ISSUER', 'OAUTH_AUDIENCE', 'OAUTH_JWKS_URL'] as const).filter((_, i) => !oauth[i]);
    throw new ConfigError(missing[0] ?? 'OAUTH_ISSUER', 'is required when any OAuth2 setting is set (OAUTH_ISSUER, OAUTH_AUDIENCE, OAUTH_JWKS_URL go together)');
  }
  return config;
}
