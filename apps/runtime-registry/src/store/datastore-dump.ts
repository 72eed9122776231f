import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { KEY_PREFIX, RegistryKeys } from './keys.js';
import { snapshot } from './live-reads.js';

/** Longest collection read per key (a dump is for people, not a backup). */
const MAX_ITEMS = 1000;

/** A key of the registry with its Redis type and its value as Redis answers it. */
export interface DumpedKey {
  key: string;
  type: string;
  value: unknown;
}

/** The registry's keys (`P rt:*`) one SCAN page at a time, for the diagnostics dump. */
@Injectable()
export class DatastoreDump {
  private readonly keys: RegistryKeys;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RegistryKeys(prefix);
  }

  /** A page of keys, sorted, with their values; `next` null when done. Keys expired meanwhile are left out. */
  async page(cursor: string, limit: number): Promise<{ keys: DumpedKey[]; next: string | null }> {
    const [next, found] = await this.redis.scan(cursor, 'MATCH', this.keys.all(), 'COUNT', limit);
    const unique = [...new Set(found)].sort();
    const types = (await snapshot(
      this.redis,
      unique.map((key) => ['type', key]),
    )) as string[];
    const values = await snapshot(
      this.redis,
      unique.map((key, i) => valueRead(key, types[i] ?? 'none')),
    );
    const keys = unique
      .map((key, i) => ({ key, type: types[i] ?? 'none', value: values[i] }))
      .filter((k) => k.type !== 'none');
    return { keys, next: next === '0' ? null : next };
  }
}

function valueRead(key: string, type: string): [string, ...Array<string | number>] {
  switch (type) {
    case 'string':
      return ['get', key];
    case 'hash':
      return ['hgetall', key];
    case 'set':
      return ['srandmember', key, MAX_ITEMS];
    case 'zset':
      return ['zrange', key, 0, MAX_ITEMS - 1, 'WITHSCORES'];
    case 'list':
      return ['lrange', key, 0, MAX_ITEMS - 1];
    default:
      return ['exists', key];
  }
}
