import {
  bool,
  checkOAuthSettings,
  cidrList,
  commonSettings,
  ConfigError,
  int,
  list,
  loadConfig,
  oauthSettings,
  str,
  url,
  type ConfigOf,
} from '@switchboard/config';

export const settings = {
  ...commonSettings(8080),
  adminCidrAllowlist: cidrList(
    'ADMIN_CIDR_ALLOWLIST',
    ['127.0.0.1/32', '::1/128'],
    'Comma-separated CIDR blocks allowed to call the admin API (others: 403)',
  ),
  trustedProxyCidrs: cidrList(
    'TRUSTED_PROXY_CIDRS',
    [],
    "Comma-separated CIDR blocks of reverse proxies in front of the gateway (e.g. the ingress controller's pods): the caller ADMIN_CIDR_ALLOWLIST judges is then the last address of X-Forwarded-For not in these blocks; empty: the TCP peer, X-Forwarded-For ignored",
  ),
  apiKeyCacheTtlMs: int({
    env: 'API_KEY_CACHE_TTL_MS',
    default: 10000,
    min: 0,
    max: 300000,
    description: 'How long a verified API key is remembered by a gateway replica',
  }),
  apiKeyNegativeCacheTtlMs: int({
    env: 'API_KEY_NEGATIVE_CACHE_TTL_MS',
    default: 2000,
    min: 0,
    max: 60000,
    description: 'How long a rejected API key is remembered',
  }),
  adminShareReads: bool({
    env: 'ADMIN_SHARE_READS',
    default: true,
    description:
      'Identical interface A reads (same credential scope, same query) arriving in one event-loop turn share one request to runtime-registry; false sends one per HTTP request',
  }),
  ...oauthSettings(),
  // Client edge (/sync WebSocket), see docs/sync-protocol.md
  syncGracePeriodMs: int({
    env: 'SYNC_GRACE_PERIOD_MS',
    default: 10000,
    min: 0,
    max: 600000,
    description:
      'How long a client whose socket dropped stays registered (and may resume by registering again) before it is unregistered and its connections closed',
  }),
  syncRegisterTimeoutMs: int({
    env: 'SYNC_REGISTER_TIMEOUT_MS',
    default: 10000,
    min: 100,
    max: 300000,
    description: 'A socket that has not registered within this time is closed (code 4008)',
  }),
  syncMaxFrameBytes: int({
    env: 'SYNC_MAX_FRAME_BYTES',
    default: 65536,
    min: 1024,
    max: 1048576,
    description: 'Largest frame a client may send; a larger one closes the socket (code 1009)',
  }),
  syncMaxSendBufferBytes: int({
    env: 'SYNC_MAX_SEND_BUFFER_BYTES',
    default: 1048576,
    min: 16384,
    max: 67108864,
    description:
      'Bytes queued for a socket the client does not read; beyond it the socket is closed as a slow consumer (code 4029)',
  }),
  syncMaxPendingRequests: int({
    env: 'SYNC_MAX_PENDING_REQUESTS',
    default: 32,
    min: 1,
    max: 1024,
    description: 'Requests of one socket queued or in flight; further requests are refused with TooManyRequests',
  }),
  syncMaxDetachedPushes: int({
    env: 'SYNC_MAX_DETACHED_PUSHES',
    default: 100,
    min: 0,
    max: 10000,
    description:
      'Pushes kept for a client during its grace period and delivered when it resumes (the oldest are dropped beyond)',
  }),
  syncUnregisterRetryMs: int({
    env: 'SYNC_UNREGISTER_RETRY_MS',
    default: 500,
    min: 10,
    max: 60000,
    description:
      'First delay before the unregisters runtime-registry did not take (registry, Redis or NATS restarting) are sent again; it doubles while they keep failing, up to 10 s (or this value if larger); they are sent until the registry takes them (at shutdown, until SHUTDOWN_TIMEOUT_MS runs out)',
  }),
  syncMaxPendingUnregisters: int({
    env: 'SYNC_MAX_PENDING_UNREGISTERS',
    default: 50000,
    min: 1,
    max: 10000000,
    description:
      'Unregisters kept for a retry (about 1 KB each); beyond it the oldest is forgotten, logged and counted in sync_unregisters_lost_total, and its client stays registered until this replica stops heartbeating',
  }),
  syncReconcileIntervalMs: int({
    env: 'SYNC_RECONCILE_INTERVAL_MS',
    default: 60000,
    min: 0,
    max: 3600000,
    description:
      'Interval of the passes that check every client of this replica against runtime-registry: they apply what pushes lost on the way would have told it (kicks, closed connections, claims, settings, connection states, client updates, unregistrations) and remove what the registry holds that no session here has (channels, connections and registrations of requests whose answer was lost); a pass also runs whenever the NATS connection comes back. 0: only after a reconnect',
  }),
  syncReconcileConcurrency: int({
    env: 'SYNC_RECONCILE_CONCURRENCY',
    default: 4,
    min: 1,
    max: 64,
    description:
      'Reads a reconcile pass has in flight at once (runtime-registry gateway.sessions, up to 500 clients each)',
  }),
  syncPingIntervalMs: int({
    env: 'SYNC_PING_INTERVAL_MS',
    default: 20000,
    min: 1000,
    max: 300000,
    description: 'WebSocket ping interval; a socket that misses a pong for a whole interval is dropped',
  }),
  syncPublicUrl: url({
    env: 'SYNC_PUBLIC_URL',
    optional: true,
    protocols: ['ws', 'wss'],
    description:
      "URL clients reach this replica's /sync at, announced in heartbeats (default ws://HTTP_HOST:HTTP_PORT/sync)",
  }),
  clientTokenClockSkewSeconds: int({
    env: 'CLIENT_TOKEN_CLOCK_SKEW_SECONDS',
    default: 30,
    min: 0,
    max: 600,
    description: 'Clock skew tolerated when checking exp and iat of client tokens',
  }),
  applicationCacheTtlMs: int({
    env: 'APPLICATION_CACHE_TTL_MS',
    default: 60000,
    min: 0,
    max: 3600000,
    description:
      "How long a replica keeps an application's shared secret; dropped earlier when management-api announces a change",
  }),
  gatewayHeartbeatIntervalMs: int({
    env: 'GATEWAY_HEARTBEAT_INTERVAL_MS',
    default: 5000,
    min: 200,
    max: 60000,
    description: 'Interval of the heartbeats this replica publishes to runtime-registry',
  }),
  gatewayRegion: str({ env: 'GATEWAY_REGION', optional: true, description: 'Region announced in heartbeats' }),
  // ICE servers given to clients at register (docs/sync-protocol.md, "Media signalling")
  iceStunUrls: list({
    env: 'ICE_STUN_URLS',
    default: [],
    item: iceUrlProblem,
    description: 'Comma-separated STUN URLs (`stun:host:port`) given to clients at register; empty: none',
  }),
  iceTurnUrls: list({
    env: 'ICE_TURN_URLS',
    default: [],
    item: iceUrlProblem,
    description:
      'Comma-separated TURN URLs (`turn:host:3478?transport=udp`, `turns:...`) given to clients at register with time-limited credentials from ICE_TURN_SECRET',
  }),
  iceTurnSecret: str({
    env: 'ICE_TURN_SECRET',
    optional: true,
    sensitive: true,
    description:
      "The TURN server's shared secret (coturn `static-auth-secret` with `use-auth-secret`): each client gets the username `<expiry>:<clientId>` and its HMAC-SHA1 as the credential",
  }),
  iceTurnCredentialTtlSeconds: int({
    env: 'ICE_TURN_CREDENTIAL_TTL_SECONDS',
    default: 86400,
    min: 60,
    max: 604800,
    description: 'How long a TURN credential given at register stays valid',
  }),
  mediaSignallingTimeoutMs: int({
    env: 'MEDIA_SIGNALLING_TIMEOUT_MS',
    default: 20000,
    min: 1000,
    max: 120000,
    description:
      "How long the gateway waits for a media-agent's answer to an offer, a subscribe, an answer or candidates (a join may take three of the agent's JANUS_REQUEST_TIMEOUT_MS)",
  }),
};

function iceUrlProblem(value: string): string | undefined {
  return /^(stuns?|turns?):[^\s]+$/.test(value) ? undefined : 'is not a stun:, stuns:, turn: or turns: URL';
}

export type GatewayConfig = ConfigOf<typeof settings>;

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const config = loadConfig(settings, env);
  checkOAuthSettings(config);
  if (config.iceTurnUrls.length > 0 && !config.iceTurnSecret)
    throw new ConfigError('ICE_TURN_SECRET', 'is required when ICE_TURN_URLS is set (TURN servers need credentials)');
  return config;
}
