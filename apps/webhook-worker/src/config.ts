import { commonSettings, databaseSettings, loadConfig, redisSettings, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8084),
  ...databaseSettings(),
  ...redisSettings(),
};

export type WebhookWorkerConfig = ConfigOf<typeof settings>;

export function loadWebhookWorkerConfig(env: Record<string, string | undefined> = process.env): WebhookWorkerConfig {
  return loadConfig(settings, env);
}
