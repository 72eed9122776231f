import {
  commonSettings,
  ConfigError,
  databaseSettings,
  eventConsumerSettings,
  int,
  loadConfig,
  redisSettings,
  webhookTargetSettings,
  type ConfigOf,
} from '@switchboard/config';

const SECOND = 1000;
const HOUR = 3600 * SECOND;

export const settings = {
  ...commonSettings(8084),
  ...databaseSettings(),
  ...redisSettings(),
  ...eventConsumerSettings(),

  // ---- consumption of the domain event stream (JetStream) ----
  eventAckWaitMs: int({
    env: 'WEBHOOK_EVENT_ACK_WAIT_MS',
    default: 30 * SECOND,
    min: 1000,
    max: 10 * 60 * SECOND,
    description:
      'JetStream ack wait of the webhook-worker consumer: an event not acknowledged within it is delivered again (to any replica)',
  }),
  eventMaxAckPending: int({
    env: 'WEBHOOK_EVENT_MAX_ACK_PENDING',
    default: 5000,
    min: 1,
    max: 1_000_000,
    description: 'Events handed to the worker replicas and not yet acknowledged, at most',
  }),
  eventBatchSize: int({
    env: 'WEBHOOK_EVENT_BATCH_SIZE',
    default: 2000,
    min: 1,
    max: 10000,
    description:
      'Events queued together (one PostgreSQL transaction, one BullMQ round trip), at most; the deliveries of one webhook among them share jobs (WEBHOOK_DELIVERIES_PER_JOB)',
  }),
  batchWindowMs: int({
    env: 'WEBHOOK_BATCH_WINDOW_MS',
    default: 20,
    min: 0,
    max: 5000,
    description:
      'Coalescing window of batch webhooks: events of one application with the same timestamp read within it of the first one go in one call (other events are not held)',
  }),
  configCacheMs: int({
    env: 'WEBHOOK_CONFIG_CACHE_MS',
    default: 2000,
    min: 0,
    max: 5000,
    description: 'How long a resolved webhook configuration is reused (also dropped on applications.changed)',
  }),
  configStaleMs: int({
    env: 'WEBHOOK_CONFIG_STALE_MS',
    default: 10 * 60 * SECOND,
    min: 0,
    max: 24 * HOUR,
    description:
      'While management-api cannot answer, the last configuration it gave for an (application, channel) keeps being used for at most this long after it was read (0: events wait instead); logged and counted in webhook_config_stale_total',
  }),

  // ---- delivery (BullMQ) ----
  concurrency: int({
    env: 'WEBHOOK_CONCURRENCY',
    default: 100,
    min: 1,
    max: 5000,
    description: 'Delivery jobs in progress at once per replica',
  }),
  deliveriesPerJob: int({
    env: 'WEBHOOK_DELIVERIES_PER_JOB',
    default: 50,
    min: 1,
    max: 500,
    description:
      'Deliveries of one webhook queued together by one intake group (one BullMQ job), at most; those of one channel are sent one after the other, channels concurrently; 1: a job per delivery',
  }),
  timeoutMs: int({
    env: 'WEBHOOK_TIMEOUT_MS',
    default: 10 * SECOND,
    min: 100,
    max: 120 * SECOND,
    description:
      'Timeout of one delivery attempt (connect, send, answer); at most SHUTDOWN_TIMEOUT_MS, since a stopping replica waits for its attempts in flight',
  }),
  retryDelayMs: int({
    env: 'WEBHOOK_RETRY_DELAY_MS',
    default: 5 * SECOND,
    min: 0,
    max: HOUR,
    description: 'Backoff of reliable webhooks: attempt n+1 waits this times 2^(n-1) after attempt n fails',
  }),
  jobLockMs: int({
    env: 'WEBHOOK_JOB_LOCK_MS',
    default: 30 * SECOND,
    min: 1000,
    max: 10 * 60 * SECOND,
    description:
      'BullMQ lock of a delivery in progress; a replica that dies holding it hands the delivery back after this long',
  }),
  maxSocketsPerOrigin: int({
    env: 'WEBHOOK_MAX_SOCKETS_PER_ORIGIN',
    default: 100,
    min: 1,
    max: 5000,
    description: 'Connections (kept alive) per receiving origin and replica, at most',
  }),
  ...webhookTargetSettings(),

  // ---- delivery log, recovery, retention ----
  logIntervalMs: int({
    env: 'WEBHOOK_LOG_INTERVAL_MS',
    default: 5,
    min: 1,
    max: 1000,
    description:
      'Attempts are logged in statements at least this far apart while every delivery place is not taken (then at once); larger: fewer PostgreSQL statements at moderate load, but a job, and the next job of its channel, waits up to this long for its log rows',
  }),
  logRetentionDays: int({
    env: 'WEBHOOK_LOG_RETENTION_DAYS',
    default: 7,
    min: 1,
    max: 3650,
    description: 'Deliveries, their logged attempts and processed event ids older than this are pruned',
  }),
  pruneIntervalMs: int({
    env: 'WEBHOOK_PRUNE_INTERVAL_MS',
    default: HOUR,
    min: 1000,
    max: 24 * HOUR,
    description: 'How often one replica prunes the delivery log',
  }),
  reconcileIntervalMs: int({
    env: 'WEBHOOK_RECONCILE_INTERVAL_MS',
    default: 10 * SECOND,
    min: 100,
    max: HOUR,
    description:
      'How often one replica looks for pending deliveries whose BullMQ job is missing (crash, Redis data loss) and queues them again',
  }),
  reconcileAfterMs: int({
    env: 'WEBHOOK_RECONCILE_AFTER_MS',
    default: 30 * SECOND,
    min: 500,
    max: 24 * HOUR,
    description: 'A pending delivery is checked by the reconciler only once it is this old',
  }),
};

export type WebhookWorkerConfig = ConfigOf<typeof settings>;

export function loadWebhookWorkerConfig(env: Record<string, string | undefined> = process.env): WebhookWorkerConfig {
  const config = loadConfig(settings, env);
  // A stopping replica finishes its attempts in flight and logs them before it exits, and is forced
  // out 2 s after SHUTDOWN_TIMEOUT_MS: an attempt allowed to take longer would be cut off unlogged,
  // and sent again once its job's lock expired.
  if (config.timeoutMs > config.shutdownTimeoutMs) {
    throw new ConfigError(
      'WEBHOOK_TIMEOUT_MS',
      `(${config.timeoutMs}) must not exceed SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs}): a stopping replica waits for its attempts in flight`,
    );
  }
  return config;
}
