import { commonSettings, databaseSettings, loadConfig, redisSettings, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8083),
  ...databaseSettings(),
  ...redisSettings(),
};

export type RecordingServiceConfig = ConfigOf<typeof settings>;

export function loadRecordingServiceConfig(env: Record<string, string | undefined> = process.env): RecordingServiceConfig {
  return loadConfig(settings, env);
}
