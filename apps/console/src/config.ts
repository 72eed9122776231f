import { ConfigError, int, loadConfig, oneOf, str, url, type ConfigOf } from '@switchboard/config';

/** Settings of the console's backend-for-frontend (served on one origin with the web application). */
export const settings = {
  httpHost: str({
    env: 'HTTP_HOST',
    default: '127.0.0.1',
    description: 'Address the console binds to (0.0.0.0 in containers)',
  }),
  httpPort: int({ env: 'HTTP_PORT', default: 8090, min: 0, max: 65535, description: 'HTTP port of the console' }),
  logLevel: oneOf(['debug', 'info', 'warn', 'error'] as const, {
    env: 'LOG_LEVEL',
    default: 'info',
    description: 'Lowest log level written',
  }),
  gatewayUrl: url({
    env: 'CONSOLE_GATEWAY_URL',
    default: 'http://127.0.0.1:8080',
    protocols: ['http', 'https'],
    description: 'Base URL of admin-gateway; the console forwards /api/a/* to <this>/admin/api/v1.0/*',
  }),
  managementUrl: url({
    env: 'CONSOLE_MANAGEMENT_URL',
    default: 'http://127.0.0.1:8081',
    protocols: ['http', 'https'],
    description: 'Base URL of management-api; the console forwards /api/b/* to <this>/*',
  }),
  recordingsUrl: url({
    env: 'CONSOLE_RECORDINGS_URL',
    optional: true,
    protocols: ['http', 'https'],
    description:
      "Base URL of recording-service's signed file links; the console serves /recordings/files/* from <this>/files/* (unset: recordings are listed, not played)",
  }),
  natsUrl: url({
    env: 'NATS_URL',
    optional: true,
    protocols: ['nats', 'tls'],
    description:
      "NATS server URL: the console keeps the connections' recent stats from the runtime's events for the charts (unset: no charts)",
  }),
  natsNamespace: str({
    env: 'NATS_NAMESPACE',
    default: 'sb',
    pattern: /^[A-Za-z0-9_-]{1,32}$/,
    description: 'Prefix of the NATS subjects of the deployment (as the other services)',
  }),
  oauthIssuer: url({
    env: 'CONSOLE_OAUTH_ISSUER',
    optional: true,
    protocols: ['http', 'https'],
    description:
      'OAuth2 issuer the console signs in with (authorization code + PKCE; its metadata from /.well-known/oauth-authorization-server); http only on loopback. Set with CONSOLE_OAUTH_CLIENT_ID',
  }),
  oauthClientId: str({
    env: 'CONSOLE_OAUTH_CLIENT_ID',
    optional: true,
    description: 'Client id of the console at the issuer (a public client: no secret)',
  }),
  oauthScope: str({
    env: 'CONSOLE_OAUTH_SCOPE',
    default: '',
    description: 'Scopes the console asks for, space separated (e.g. the operator scope); empty: none asked',
  }),
  oauthResource: str({
    env: 'CONSOLE_OAUTH_RESOURCE',
    optional: true,
    description: 'The `resource` (RFC 8707) asked for, when the issuer sets the audience from it',
  }),
  upstreamTimeoutMs: int({
    env: 'CONSOLE_UPSTREAM_TIMEOUT_MS',
    default: 15000,
    min: 100,
    max: 120000,
    description: 'How long a forwarded call to interface A or B may take before the console answers 504',
  }),
};

export type ConsoleConfig = ConfigOf<typeof settings>;

export function loadConsoleConfig(env: Record<string, string | undefined> = process.env): ConsoleConfig {
  const config = loadConfig(settings, env);
  if ((config.oauthIssuer === undefined) !== (config.oauthClientId === undefined))
    throw new ConfigError(
      config.oauthIssuer === undefined ? 'CONSOLE_OAUTH_ISSUER' : 'CONSOLE_OAUTH_CLIENT_ID',
      'is required with the other (CONSOLE_OAUTH_ISSUER and CONSOLE_OAUTH_CLIENT_ID go together)',
    );
  return config;
}
