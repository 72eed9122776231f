import { Redis } from 'ioredis';

/**
 * A Redis connection that keeps reconnecting forever; commands issued while it is down fail fast
 * (no offline queue) so callers answer 503 instead of hanging.
 */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
  });
}

export async function redisReadiness(redis: Redis): Promise<void> {
  const pong = await redis.ping();
  if (pong !== 'PONG') throw new Error(`unexpected PING answer ${pong}`);
}
