import { bool, ConfigError, int, list, oneOf, str, url } from './settings.js';
import { parseCidr } from './cidr.js';

/** Settings every service has. */
export function commonSettings(defaultPort: number) {
  return {
    httpHost: str({
      env: 'HTTP_HOST',
      default: '127.0.0.1',
      description: 'Address the HTTP server binds to (0.0.0.0 in containers)',
    }),
    httpPort: int({
      env: 'HTTP_PORT',
      default: defaultPort,
      min: 0,
      max: 65535,
      description: 'HTTP port (API, and /healthz, /readyz, /metrics unless OPS_PORT is set)',
    }),
    opsPort: int({
      env: 'OPS_PORT',
      optional: true,
      min: 1,
      max: 65535,
      description:
        'Port of /healthz, /readyz and /metrics, on HTTP_HOST, when they must not be reachable where the API is (a public ingress in front of HTTP_PORT); HTTP_PORT then answers 404 for them. Unset: on HTTP_PORT',
    }),
    logLevel: oneOf(['debug', 'info', 'warn', 'error'] as const, {
      env: 'LOG_LEVEL',
      default: 'info',
      description: 'Lowest log level written',
    }),
    natsUrl: url({ env: 'NATS_URL', protocols: ['nats', 'tls'], description: 'NATS server URL (JetStream enabled)' }),
    natsNamespace: str({
      env: 'NATS_NAMESPACE',
      default: 'sb',
      pattern: /^[A-Za-z0-9_-]{1,32}$/,
      description: 'Prefix of every NATS subject and JetStream stream; separates deployments sharing one NATS',
    }),
    natsRequestTimeoutMs: int({
      env: 'NATS_REQUEST_TIMEOUT_MS',
      default: 5000,
      min: 50,
      max: 120000,
      description: 'Timeout of every request over NATS',
    }),
    shutdownTimeoutMs: int({
      env: 'SHUTDOWN_TIMEOUT_MS',
      default: 10000,
      min: 0,
      max: 300000,
      description: 'Grace period for in-flight work on SIGTERM',
    }),
  };
}

export function redisSettings() {
  return {
    redisUrl: url({ env: 'REDIS_URL', protocols: ['redis', 'rediss'], description: 'Redis URL' }),
    redisKeyPrefix: str({
      env: 'REDIS_KEY_PREFIX',
      default: 'sb:',
      pattern: /^[A-Za-z0-9:_-]{0,64}$/,
      description: 'Prefix of every Redis key this deployment writes',
    }),
  };
}

export function databaseSettings() {
  return {
    databaseUrl: url({
      env: 'DATABASE_URL',
      protocols: ['postgres', 'postgresql'],
      sensitive: true,
      description: 'PostgreSQL URL',
    }),
    databasePoolSize: int({
      env: 'DATABASE_POOL_SIZE',
      default: 10,
      min: 1,
      max: 200,
      description: 'PostgreSQL connection pool size',
    }),
  };
}

export function cidrList(env: string, defaults: readonly string[], description: string) {
  return list({ env, default: defaults, description, item: (v) => (parseCidr(v) ? undefined : 'is not a CIDR block') });
}

export { bool };

/** OAuth2 bearer tokens (JWT verified against the issuer's JWKS): all of issuer, audience and JWKS URL, or none. */
export function oauthSettings() {
  return {
    oauthIssuer: str({
      env: 'OAUTH_ISSUER',
      optional: true,
      description:
        'Issuer (iss) of accepted OAuth2 access tokens; set with OAUTH_AUDIENCE and OAUTH_JWKS_URL to enable Bearer tokens',
    }),
    oauthAudience: str({
      env: 'OAUTH_AUDIENCE',
      optional: true,
      description: 'Audience (aud) accepted OAuth2 access tokens must carry',
    }),
    oauthJwksUrl: url({
      env: 'OAUTH_JWKS_URL',
      optional: true,
      protocols: ['https', 'http'],
      description: 'JWKS URL of the OAuth2 issuer',
    }),
    oauthOperatorScope: str({
      env: 'OAUTH_OPERATOR_SCOPE',
      default: 'switchboard:operator',
      description: 'Scope that makes a Bearer token an operator credential',
    }),
    oauthOrganizationClaim: str({
      env: 'OAUTH_ORGANIZATION_CLAIM',
      default: 'org_id',
      description: 'Claim of a Bearer token holding the organization id',
    }),
  };
}

/** The three OAuth2 settings go together: one without the others stops the service, naming what is missing. */
export function checkOAuthSettings(config: {
  oauthIssuer?: string | undefined;
  oauthAudience?: string | undefined;
  oauthJwksUrl?: string | undefined;
}): void {
  const values = [config.oauthIssuer, config.oauthAudience, config.oauthJwksUrl];
  if (values.some(Boolean) && !values.every(Boolean)) {
    const missing = (['OAUTH_ISSUER', 'OAUTH_AUDIENCE', 'OAUTH_JWKS_URL'] as const).filter((_, i) => !values[i]);
    throw new ConfigError(
      missing[0] ?? 'OAUTH_ISSUER',
      'is required when any OAuth2 setting is set (OAUTH_ISSUER, OAUTH_AUDIENCE, OAUTH_JWKS_URL go together)',
    );
  }
}

/** Settings of every durable consumer of a JetStream stream (service-kit's EventConsumerLoop). */
export function eventConsumerSettings() {
  return {
    eventMaxAttempts: int({
      env: 'EVENT_MAX_ATTEMPTS',
      default: 5,
      min: 1,
      max: 1000,
      description:
        'Deliveries of an event whose processing fails by itself (not because a dependency is down) before it is parked (dead-lettered: listed and replayable on interface B, ParkedEvents) and the consumer moves on',
    }),
  };
}
