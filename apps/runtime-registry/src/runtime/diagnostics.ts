import { Inject, Injectable } from '@nestjs/common';
import type { DatastorePage } from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { DatastoreDump } from '../store/datastore-dump.js';

/**
 * Budget of the rendered values of one page, well below NATS's default 1 MiB message limit: past
 * it, an entry keeps its key and type and its value becomes `{ truncated: true, bytes }`.
 */
const PAGE_VALUE_BUDGET = 512 * 1024;

/**
 * The diagnostics datastore dump: a SCAN page of the registry's keys (`P rt:*`), each value rendered
 * per Redis type (JSON parsed when it is JSON). Secrets are never written to these keys.
 */
@Injectable()
export class Diagnostics {
  constructor(
    private readonly dump: DatastoreDump,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  async page(cursor: string, count: number): Promise<DatastorePage> {
    const limit = Math.max(1, Math.min(count, this.config.datastoreDumpMaxCount));
    const { keys, next } = await this.dump.page(cursor, limit);
    const entries: DatastorePage['entries'] = [];
    let budget = PAGE_VALUE_BUDGET;
    for (const { key, type, value: stored } of keys) {
      const value = render(type, stored);
      const bytes = JSON.stringify(value)?.length ?? 0;
      budget -= bytes;
      entries.push({ key, type, value: budget >= 0 ? value : { truncated: true, bytes } });
    }
    return { entries, next };
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
