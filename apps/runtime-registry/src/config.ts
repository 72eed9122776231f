import {
  commonSettings,
  eventConsumerSettings,
  int,
  loadConfig,
  redisSettings,
  str,
  url,
  type ConfigOf,
} from '@switchboard/config';

export const settings = {
  ...commonSettings(8082),
  ...redisSettings(),
  // Media servers, connectors, gateways and recording services (heartbeats)
  serverHeartbeatTimeoutSeconds: int({
    env: 'SERVER_HEARTBEAT_TIMEOUT_SECONDS',
    default: 15,
    min: 1,
    max: 3600,
    description:
      'A media server, connector, gateway or recording service without a heartbeat for this long is gone: listed with active=false and given no new connections',
  }),
  serverRetentionSeconds: int({
    env: 'SERVER_RETENTION_SECONDS',
    default: 3600,
    min: 1,
    max: 2592000,
    description:
      'A gone server is removed from the lists (and its statistics dropped) after this long without a heartbeat, once the sweeping replica has itself heard heartbeats without a break for as long (see the registry README, "Silence")',
  }),
  clientDropGraceSeconds: int({
    env: 'CLIENT_DROP_GRACE_SECONDS',
    default: 30,
    min: 0,
    max: 86400,
    description:
      'Clients held by a gateway replica that is gone (no heartbeat) are unregistered and their connections closed this long after it went gone, once the sweeping replica has itself heard heartbeats without a break for the timeout and this grace (a NATS or Redis outage restarts that clock)',
  }),
  sweepIntervalMs: int({
    env: 'REGISTRY_SWEEP_INTERVAL_MS',
    default: 5000,
    min: 100,
    max: 600000,
    description:
      'Interval of the housekeeping pass (stale servers, clients of gone gateways, parked events); one replica runs it at a time',
  }),
  applicationIdleTtlSeconds: int({
    env: 'APPLICATION_IDLE_TTL_SECONDS',
    default: 86400,
    min: 60,
    max: 31536000,
    description:
      'How long the bookkeeping of an application no longer in use (owner, ordering counters) stays in Redis',
  }),
  // Domain events (JetStream)
  eventStreamMaxAgeSeconds: int({
    env: 'EVENT_STREAM_MAX_AGE_SECONDS',
    default: 604800,
    min: 60,
    max: 31536000,
    description: 'Events older than this are dropped from the JetStream stream <NATS_NAMESPACE>-events',
  }),
  eventStreamDuplicateWindowSeconds: int({
    env: 'EVENT_STREAM_DUPLICATE_WINDOW_SECONDS',
    default: 120,
    min: 1,
    max: 86400,
    description: 'Duplicate window of the event stream: a re-published event id within it is stored once',
  }),
  eventStreamReplicas: int({
    env: 'EVENT_STREAM_REPLICAS',
    default: 1,
    min: 1,
    max: 5,
    description: 'Replicas of the event stream in a clustered NATS',
  }),
  eventPublishTimeoutMs: int({
    env: 'EVENT_PUBLISH_TIMEOUT_MS',
    default: 3000,
    min: 100,
    max: 60000,
    description:
      'Time budget to publish the events of one operation, retries with backoff included; past it the events are parked in Redis for later relay and the caller gets Unavailable',
  }),
  // Channel configs (management-api): the governing config's recordingEnabled, per channel
  channelConfigCacheMs: int({
    env: 'CHANNEL_CONFIG_CACHE_MS',
    default: 300000,
    min: 0,
    max: 86400000,
    description:
      "How long a channel config's recordingEnabled, asked from management-api when a channel activates, is reused per application and channel (dropped at once on management-api.v1.applications.changed)",
  }),
  channelConfigTimeoutMs: int({
    env: 'CHANNEL_CONFIG_TIMEOUT_MS',
    default: 1000,
    min: 50,
    max: 30000,
    description:
      "How long a join activating a channel waits for management-api's channel config; past it the channel does not record by default and the next activation asks again",
  }),
  // Media control: commands to the media-agents of Janus servers (README, "Media control")
  ...eventConsumerSettings(),
  mediaAgentTimeoutMs: int({
    env: 'MEDIA_AGENT_TIMEOUT_MS',
    default: 2000,
    min: 50,
    max: 60000,
    description:
      'How long the registry waits for a media-agent to answer one command (a mute, a leave, a kick, a room listing); a command not answered is tried twice more, then its event comes again later',
  }),
  mediaReconcileIntervalMs: int({
    env: 'MEDIA_RECONCILE_INTERVAL_MS',
    default: 60000,
    min: 1000,
    max: 3600000,
    description:
      'Interval of the reconciliation of every active Janus server with the registry (Janus connections and rooms the registry does not hold are removed); one replica at a time runs it (a Redis lock), and each replica tries a pass 1 s after it starts',
  }),
  mediaReconcileGraceMs: int({
    env: 'MEDIA_RECONCILE_GRACE_MS',
    default: 5000,
    min: 0,
    max: 600000,
    description:
      'The reconciliation leaves alone registry connections opened or connected less than this long ago (joins in flight)',
  }),
  // Application environment
  externalAdminUrl: url({
    env: 'EXTERNAL_ADMIN_URL',
    default: 'http://127.0.0.1:8080/admin',
    protocols: ['http', 'https'],
    description: 'Admin URL announced by the application environment operation',
  }),
  externalSyncUrl: url({
    env: 'EXTERNAL_SYNC_URL',
    default: 'ws://127.0.0.1:8080/sync',
    protocols: ['ws', 'wss'],
    description: 'Client edge (/sync) URL announced by the application environment operation',
  }),
  externalSipAuthority: str({
    env: 'EXTERNAL_SIP_AUTHORITY',
    optional: true,
    description: 'SIP authority announced by the application environment operation (null when unset)',
  }),
  datastoreDumpMaxCount: int({
    env: 'DATASTORE_DUMP_MAX_COUNT',
    default: 1000,
    min: 10,
    max: 10000,
    description: 'Largest page of the diagnostics datastore dump (keys per page)',
  }),
};

export type RegistryConfig = ConfigOf<typeof settings>;

export function loadRegistryConfig(env: Record<string, string | undefined> = process.env): RegistryConfig {
  return loadConfig(settings, env);
}
