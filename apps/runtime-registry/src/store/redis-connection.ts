import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';

/** Whether the registry's Redis connection is up, and its ups and downs as they happen. */
@Injectable()
export class RedisConnection {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  isUp(): boolean {
    return this.redis.status === 'ready';
  }

  /** Calls `up` when the connection is ready again and `down` when it is lost; answers the unwatch. */
  watch(up: () => void, down: () => void): () => void {
    this.redis.on('ready', up);
    this.redis.on('close', down);
    return () => {
      this.redis.off('ready', up);
      this.redis.off('close', down);
    };
  }
}
