import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { JsonLogger } from './logger.js';

/**
 * A Redis connection that keeps reconnecting forever; commands issued while it is down fail fast
 * (no offline queue) so callers answer 503 instead of hanging.
 *
 * `autoPipelining`: commands issued during one event loop turn go out in one write (and their
 * answers come back in one read) instead of one round trip each; for services that issue many
 * small concurrent commands. Order per connection is unchanged, MULTI and scripts stay atomic.
 */
export function createRedis(
  url: string,
  name: string,
  options: { autoPipelining?: boolean; logger: JsonLogger },
): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
    enableAutoPipelining: options.autoPipelining ?? false,
  });
  // Without a listener ioredis prints "Unhandled error event" on stderr at every reconnect attempt of
  // an outage; one log line when the connection is lost and one when it is back (readiness says so meanwhile).
  const { logger } = options;
  let down = false;
  redis.on('error', (e: Error) => {
    if (down) return;
    down = true;
    logger.event('warn', 'Redis connection lost; reconnecting', { error: e.message });
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.event('info', 'Redis connection back');
  });
  return redis;
}

export async function redisReadiness(redis: Redis): Promise<void> {
  const pong: string = await redis.ping();
  if (pong !== 'PONG') throw new Error(`unexpected PING answer ${pong}`);
}

/** Injection token of the service's Redis connection. */
export const REDIS = Symbol('REDIS');
export const InjectRedis = () => Inject(REDIS);

/** Closes the Redis connection after in-flight work finished. */
@Injectable()
export class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
