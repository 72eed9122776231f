import { commonSettings, loadConfig, redisSettings, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8082),
  ...redisSettings(),
};

export type RegistryConfig = ConfigOf<typeof settings>;

export function loadRegistryConfig(env: Record<string, string | undefined> = process.env): RegistryConfig {
  return loadConfig(settings, env);
}
