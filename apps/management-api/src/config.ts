import { commonSettings, databaseSettings, loadConfig, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8081),
  ...databaseSettings(),
};

export type ManagementConfig = ConfigOf<typeof settings>;

export function loadManagementConfig(env: Record<string, string | undefined> = process.env): ManagementConfig {
  return loadConfig(settings, env);
}
