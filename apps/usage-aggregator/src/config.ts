import {
  commonSettings,
  databaseSettings,
  eventConsumerSettings,
  int,
  loadConfig,
  type ConfigOf,
} from '@switchboard/config';

export const settings = {
  ...commonSettings(8085),
  ...eventConsumerSettings(),
  // No Redis: its state is PostgreSQL (usage schema) and JetStream (the event consumer).
  ...databaseSettings(),
  usageLedgerRetentionSeconds: int({
    env: 'USAGE_LEDGER_RETENTION_SECONDS',
    default: 8 * 24 * 3600,
    min: 0,
    max: 3153600000,
    description:
      "Processed event ids and ended connection rows older than this are deleted (hourly usage is kept). Never less than the max age of the domain event stream (7 days by default, the live stream's when longer; an unlimited stream: nothing is pruned), so an event JetStream can still redeliver is always recognized",
  }),
  usagePruneIntervalMs: int({
    env: 'USAGE_PRUNE_INTERVAL_MS',
    default: 600000,
    min: 100,
    max: 86400000,
    description:
      'Interval of the pruning of processed event ids and ended connection rows (USAGE_LEDGER_RETENTION_SECONDS)',
  }),
};

export type UsageAggregatorConfig = ConfigOf<typeof settings>;

export function loadUsageAggregatorConfig(
  env: Record<string, string | undefined> = process.env,
): UsageAggregatorConfig {
  return loadConfig(settings, env);
}
