import { Redis } from 'ioredis';

/**
 * A Redis connection for BullMQ queues and workers: commands wait for a reconnection instead of
 * failing (BullMQ requires `maxRetriesPerRequest: null`). Errors reach the queues' and workers' own
 * `error` listeners; the no-op listener here only keeps ioredis from printing them.
 */
export function bullConnection(url: string, name: string): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
  });
  redis.on('error', () => undefined);
  return redis;
}

/** BullMQ key prefix: inside the deployment's Redis key prefix (`sb:bull:<queue>:...`). */
export function bullPrefix(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}bull`;
}
