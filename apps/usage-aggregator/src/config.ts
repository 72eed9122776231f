import { commonSettings, databaseSettings, loadConfig, redisSettings, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8085),
  ...databaseSettings(),
  ...redisSettings(),
};

export type UsageAggregatorConfig = ConfigOf<typeof settings>;

export function loadUsageAggregatorConfig(env: Record<string, string | undefined> = process.env): UsageAggregatorConfig {
  return loadConfig(settings, env);
}
