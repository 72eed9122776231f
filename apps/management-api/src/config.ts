import {
  checkOAuthSettings,
  commonSettings,
  databaseSettings,
  eventConsumerSettings,
  int,
  loadConfig,
  oauthSettings,
  webhookTargetSettings,
  type ConfigOf,
} from '@switchboard/config';

export const settings = {
  ...commonSettings(8081),
  ...eventConsumerSettings(),
  ...databaseSettings(),
  ...oauthSettings(),
  ...webhookTargetSettings(),
  apiKeyCacheTtlMs: int({
    env: 'API_KEY_CACHE_TTL_MS',
    default: 0,
    min: 0,
    max: 300000,
    description: 'How long a verified API key is remembered (0: look up every time)',
  }),
  clientTokenTtlSeconds: int({
    env: 'CLIENT_TOKEN_TTL_SECONDS',
    default: 120,
    min: 1,
    max: 86400,
    description: 'Lifetime of the client tokens issued by the Token action (exp - iat), in seconds',
  }),
};

export type ManagementConfig = ConfigOf<typeof settings>;

export function loadManagementConfig(env: Record<string, string | undefined> = process.env): ManagementConfig {
  const config = loadConfig(settings, env);
  checkOAuthSettings(config);
  return config;
}
