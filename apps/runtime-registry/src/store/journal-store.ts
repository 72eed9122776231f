import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { KEY_PREFIX, RegistryKeys } from './keys.js';

/** An entry of the operation journal as stored: `<applied at, Unix µs>\n<context JSON>\n<script answer>`. */
export interface RecordedEntry {
  id: string;
  text: string;
}

/** The operation journal's hash (`P rt:journal`): the scripts write its entries, this reads and removes them. */
@Injectable()
export class JournalStore {
  private readonly key: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.key = new RegistryKeys(prefix).journal();
  }

  async removeEntries(ids: string[]): Promise<void> {
    if (ids.length) await this.redis.hdel(this.key, ...ids);
  }

  /** Every entry, read in pages (HSCAN: an entry may come twice). */
  async entries(): Promise<RecordedEntry[]> {
    const out: RecordedEntry[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(this.key, cursor, 'COUNT', 500);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) out.push({ id: flat[i]!, text: flat[i + 1]! });
    } while (cursor !== '0');
    return out;
  }
}
