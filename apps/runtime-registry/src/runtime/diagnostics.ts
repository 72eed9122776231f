import { Inject, Injectable } from '@nestjs/common';
import type { DatastorePage } from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { LiveStore } from '../store/live-store.js';

/** Longest collection rendered per key (a dump is for people, not a backup). */
const MAX_ITEMS = 1000;
/**
 * Budget of the rendered values of one page, well below NATS's default 1 MiB message limit: past
 * it, an entry keeps its key and type and its value becomes `{ truncated: true, bytes }`.
 */
const PAGE_VALUE_BUDGET = 512 * 1024;

/**
 * The diagnostics datastore dump: the registry's keys (`P rt:*`, see keys.ts), one SCAN page at a
 * time (`count` bounded by DATASTORE_DUMP_MAX_COUNT; `cursor` is Redis's SCAN cursor, "0" to
 * start; `next` null when done). Values are rendered per type: string as is (JSON parsed when it
 * is JSON), hash as an object, set as a sorted array, sorted set as `[member, score]` pairs, list
 * as an array (at most 1000 items each; the values of one page at most 512 KiB, beyond which a
 * value is replaced by `{ truncated: true, bytes }`). Secrets are never written to these keys, so
 * none can appear here.
 */
@Injectable()
export class Diagnostics {
  constructor(
    private readonly store: LiveStore,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  async page(cursor: string, count: number): Promise<DatastorePage> {
    const limit = Math.max(1, Math.min(count, this.config.datastoreDumpMaxCount));
    const redis = this.store.redis;
    const [next, keys] = await redis.scan(cursor, 'MATCH', this.store.keys.all(), 'COUNT', limit);
    const unique = [...new Set(keys)].sort();
    const types = unique.length ? ((await this.store.read(unique.map((k) => ['type', k]))) as string[]) : [];
    const cmds: Array<[string, ...Array<string | number>]> = unique.map((key, i) => {
      switch (types[i]) {
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
    });
    const values = cmds.length ? await this.store.read(cmds) : [];
    const entries: DatastorePage['entries'] = [];
    let budget = PAGE_VALUE_BUDGET;
    unique.forEach((key, i) => {
      const type = types[i] ?? 'none';
      if (type === 'none') return; // expired between SCAN and read
      const value = render(type, values[i]);
      const bytes = JSON.stringify(value)?.length ?? 0;
      budget -= bytes;
      entries.push({ key, type, value: budget >= 0 ? value : { truncated: true, bytes } });
    });
    return { entries, next: next === '0' ? null : next };
  }
}

function render(type: string, value: unknown): unknown {
  switch (type) {
    case 'string':
      return maybeJson(value as string);
    case 'hash': {
      const out: Record<string, unknown> = {};
      for (const [f, v] of Object.entries((value as Record<string, string>) ?? {}).sort(([a], [b]) =>
        a.localeCompare(b),
      ))
        out[f] = maybeJson(v);
      return out;
    }
    case 'set':
      return [...((value as string[]) ?? [])].sort();
    case 'zset': {
      const flat = (value as string[]) ?? [];
      const pairs: Array<[string, number]> = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
      return pairs;
    }
    case 'list':
      return ((value as string[]) ?? []).map(maybeJson);
    default:
      return null;
  }
}

function maybeJson(v: string): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }
  return v;
}
