import {
  bool,
  commonSettings,
  ConfigError,
  databaseSettings,
  eventConsumerSettings,
  int,
  loadConfig,
  redisSettings,
  str,
  url,
  type ConfigOf,
} from '@switchboard/config';

export const settings = {
  ...commonSettings(8083),
  ...eventConsumerSettings(),
  ...databaseSettings(),
  ...redisSettings(),
  recordingsDir: str({
    env: 'RECORDINGS_DIR',
    default: '.data/recordings/work',
    minLength: 1,
    description:
      'Directory the media servers write connection recording files to (<dir>/<applicationId>/<channelId>/<channelRecordingId>/<connectionRecordingId>.audio|video.<ext>) and the mux job writes to; shared by every replica',
  }),
  recordingsStorageDir: str({
    env: 'RECORDINGS_STORAGE_DIR',
    default: '.data/recordings/storage',
    minLength: 1,
    description:
      'Local storage target the move job moves finished recording files to (<dir>/<organizationId>/<applicationId>/<channelId>/<channelRecordingId>/)',
  }),
  recordingsUrlSecret: str({
    env: 'RECORDINGS_URL_SECRET',
    sensitive: true,
    minLength: 32,
    description: 'HMAC key (at least 32 characters) signing the expiring recording file URLs served at /files/<token>',
  }),
  recordingsPublicUrl: url({
    env: 'RECORDINGS_PUBLIC_URL',
    optional: true,
    protocols: ['http', 'https'],
    description: "Base URL clients reach this service's /files/<token> at (default http://HTTP_HOST:HTTP_PORT)",
  }),
  recordingsUrlTtlSeconds: int({
    env: 'RECORDINGS_URL_TTL_SECONDS',
    default: 3600,
    min: 10,
    max: 604800,
    description: 'Lifetime of a signed recording file URL',
  }),
  recordingsIngestTimeoutMs: int({
    env: 'RECORDINGS_INGEST_TIMEOUT_MS',
    default: 60000,
    min: 0,
    max: 3600000,
    description:
      'How long the service waits, after a channel recording stopped, for the media servers to write its connection recording files (then `ingested` stays false)',
  }),
  recordingsOrphanTimeoutMs: int({
    env: 'RECORDINGS_ORPHAN_TIMEOUT_MS',
    default: 300000,
    min: 1000,
    max: 86400000,
    description:
      'An open connection recording without any event for this long, whose connection the runtime no longer knows, is closed and marked orphaned',
  }),
  recordingsSweepIntervalMs: int({
    env: 'RECORDINGS_SWEEP_INTERVAL_MS',
    default: 30000,
    min: 200,
    max: 3600000,
    description:
      'Interval of the sweeper (one replica at a time): expired recordings, orphaned connection recordings, stalled pipeline steps',
  }),
  recordingsOutboxRelayIntervalMs: int({
    env: 'RECORDINGS_OUTBOX_RELAY_INTERVAL_MS',
    default: 5000,
    min: 100,
    max: 3600000,
    description:
      'Interval at which every replica relays what is left in its event outbox (events committed with a recording change but not yet acknowledged by JetStream, e.g. while NATS was down); each commit also relays at once',
  }),
  recordingsRetentionSeconds: int({
    env: 'RECORDINGS_RETENTION_SECONDS',
    default: 0,
    min: 0,
    max: 3153600000,
    description: 'expiryTimestamp given to new channel recordings, in seconds after their start; 0: they never expire',
  }),
  recordingsMuxEnabled: bool({
    env: 'RECORDINGS_MUX_ENABLED',
    default: true,
    description: 'Mux channel recordings (ffmpeg) into one file; false: only connection files are moved',
  }),
  recordingsDeleteFiles: bool({
    env: 'RECORDINGS_DELETE_FILES',
    default: true,
    description: 'deleteFiles of new channel recordings: deleting a recording also removes its files',
  }),
  recordingsMuxConcurrency: int({
    env: 'RECORDINGS_MUX_CONCURRENCY',
    default: 1,
    min: 1,
    max: 16,
    description: 'Mux jobs (ffmpeg processes) one replica runs at once',
  }),
  ffmpegPath: str({
    env: 'FFMPEG_PATH',
    default: 'ffmpeg',
    minLength: 1,
    description: 'ffmpeg executable used by the mux job',
  }),
  ffprobePath: str({
    env: 'FFPROBE_PATH',
    default: 'ffprobe',
    minLength: 1,
    description: 'ffprobe executable used when files are ingested',
  }),
  s3Endpoint: url({
    env: 'RECORDINGS_S3_ENDPOINT',
    optional: true,
    protocols: ['http', 'https'],
    description:
      'S3-compatible endpoint of the storage target (e.g. https://s3.eu-west-1.amazonaws.com); set with RECORDINGS_S3_BUCKET and the two keys to store recordings there instead of RECORDINGS_STORAGE_DIR',
  }),
  s3Bucket: str({
    env: 'RECORDINGS_S3_BUCKET',
    optional: true,
    pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
    description: 'Bucket of the S3 storage target',
  }),
  s3Region: str({
    env: 'RECORDINGS_S3_REGION',
    default: 'us-east-1',
    pattern: /^[a-z0-9-]{1,32}$/,
    description: 'Region the S3 requests are signed for (SigV4)',
  }),
  s3AccessKeyId: str({
    env: 'RECORDINGS_S3_ACCESS_KEY_ID',
    optional: true,
    description:
      'Access key id of the S3 storage target (an identifier; the secret key is RECORDINGS_S3_SECRET_ACCESS_KEY)',
  }),
  s3SecretAccessKey: str({
    env: 'RECORDINGS_S3_SECRET_ACCESS_KEY',
    optional: true,
    sensitive: true,
    description: 'Secret access key of the S3 storage target',
  }),
  s3PathStyle: bool({
    env: 'RECORDINGS_S3_PATH_STYLE',
    default: true,
    description:
      'true: <endpoint>/<bucket>/<key> (MinIO and most S3-compatible stores); false: virtual-hosted <bucket>.<endpoint host>',
  }),
  eventsConsumerName: str({
    env: 'RECORDINGS_EVENTS_CONSUMER',
    default: 'recording-service',
    pattern: /^[A-Za-z0-9_-]{1,64}$/,
    description: 'Durable JetStream consumer of the domain event stream (shared by the replicas)',
  }),
};

export type RecordingServiceConfig = ConfigOf<typeof settings>;

/** Loads and checks the settings; the four S3 settings go together (all set: S3, none: local directory). */
export function loadRecordingServiceConfig(
  env: Record<string, string | undefined> = process.env,
): RecordingServiceConfig {
  const config = loadConfig(settings, env);
  const s3 = [config.s3Endpoint, config.s3Bucket, config.s3AccessKeyId, config.s3SecretAccessKey];
  if (s3.some(Boolean) && !s3.every(Boolean)) {
    const names = [
      'RECORDINGS_S3_ENDPOINT',
      'RECORDINGS_S3_BUCKET',
      'RECORDINGS_S3_ACCESS_KEY_ID',
      'RECORDINGS_S3_SECRET_ACCESS_KEY',
    ] as const;
    const missing = names.filter((_, i) => !s3[i]);
    throw new ConfigError(missing[0]!, `is required when any S3 setting is set (${names.join(', ')} go together)`);
  }
  return config;
}
