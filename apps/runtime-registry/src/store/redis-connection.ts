import { Inject, Injectable } from '@nestjs/common';
import { REDIS, redisReadiness } from '@switchboard/service-kit';
import { ReplyError, type Redis } from 'ioredis';

/** Whether the registry's Redis connection is up, and its ups and downs as they happen. */
@Injectable()
export class RedisConnection {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  /** Readiness: Redis answers a PING. */
  ready(): Promise<void> {
    return redisReadiness(this.redis);
  }

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

/** Whether Redis itself answered with this error (a script error), rather than being out of reach. */
export function isRedisAnswer(e: unknown): boolean {
  return e instanceof (ReplyError as new () => Error);
}
