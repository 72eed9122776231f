import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';

export const REDIS = Symbol('REDIS');
export const KEY_PREFIX = Symbol('KEY_PREFIX');

/** Closes the Redis connection after in-flight handlers finished. */
@Injectable()
export class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
