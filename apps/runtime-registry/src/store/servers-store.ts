import { Inject, Injectable } from '@nestjs/common';
import type {
  Connector,
  EnvironmentServer,
  Heartbeat,
  MediaServer,
  MediaServerComputer,
  MediaServerStatistics,
} from '@switchboard/contracts';
import { REDIS, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import type { RegistryConfig } from '../config.js';
import { parseJson } from '../model/records.js';
import { SERVER_ROLES, type ServerRole } from './keys.js';
import { LiveStore } from './live-store.js';
import { runScript } from './script-runner.js';

/** What a heartbeat leaves in Redis for one server (the registry computes `active` and `lastHeartbeat`). */
export interface StoredServer {
  id: string;
  type: string | null;
  region: string | null;
  version: string | null;
  addresses: string[];
  capacity: number | null;
  computer: MediaServerComputer | null;
  /** The last heartbeat announced a shutdown (`server.active: false`). */
  stopping: boolean;
}

export interface ServerView extends StoredServer {
  role: ServerRole;
  lastHeartbeat: number;
  /** Heartbeat within the timeout. */
  alive: boolean;
  /** Media servers: not disabled with PATCH active:false. */
  enabled: boolean;
}

/**
 * Media servers, connectors, gateways and recording services: heartbeats, placement and media
 * server statistics. All keys live in the `{servers}` slot, so placement is one atomic script that
 * compares every media server.
 */
@Injectable()
export class ServersStore {
  constructor(
    private readonly live: LiveStore,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  private get keys() {
    return this.live.keys;
  }

  /** A server is alive while its last heartbeat is at most this old. */
  get heartbeatTimeoutMs() {
    return this.config.serverHeartbeatTimeoutSeconds * 1000;
  }

  async heartbeat(hb: Heartbeat & { type?: string }): Promise<void> {
    const s = hb.server;
    const stored: StoredServer = {
      id: s.id,
      type: hb.type ?? null,
      region: s.region ?? null,
      version: s.version ?? null,
      addresses: s.addresses ?? [],
      capacity: typeof s.capacity === 'number' ? s.capacity : null,
      computer: s.computer ?? null,
      stopping: s.active === false,
    };
    await runScript(this.redis, 'rtHeartbeat', this.keys.servers(), {
      role: hb.role,
      id: s.id,
      info: JSON.stringify(stored),
    });
  }

  /** Places a connection on the least-loaded eligible media server; null when none is available. */
  async place(applicationId: string): Promise<string | null> {
    const r = await runScript<{ id: string | false }>(this.redis, 'rtPlace', this.keys.servers(), {
      app: applicationId,
      timeoutMs: this.heartbeatTimeoutMs,
    });
    return r.id || null;
  }

  /** PATCH active; false when the media server is unknown. */
  async setActive(mediaServerId: string, active: boolean): Promise<boolean> {
    const changed = await runScript<unknown>(this.redis, 'rtSetActive', this.keys.servers(), {
      id: mediaServerId,
      active,
    });
    return changed === 1;
  }

  /** Forgets servers of a role past the retention; returns their ids. */
  async expire(role: ServerRole): Promise<string[]> {
    const r = await runScript<string[]>(this.redis, 'rtExpireServers', this.keys.servers(), {
      role,
      retentionMs: this.config.serverRetentionSeconds * 1000,
    });
    return Array.isArray(r) ? r : [];
  }

  /** The Redis clock (ms), the clock every heartbeat was stamped with. */
  async now(): Promise<number> {
    return this.live.now();
  }

  async list(role: ServerRole): Promise<ServerView[]> {
    const k = this.keys;
    const [infos, seen, disabled, time] = (await this.live.read([
      ['hgetall', k.serverRole(role)],
      ['zrange', k.serverSeen(role), 0, -1, 'WITHSCORES'],
      ['smembers', k.mediaServerDisabled()],
      ['time'],
    ])) as [Record<string, string>, string[], string[], [string, string]];
    const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    const seenAt = new Map<string, number>();
    for (let i = 0; i < seen.length; i += 2) seenAt.set(seen[i]!, Number(seen[i + 1]));
    const off = new Set(role === 'mediaserver' ? disabled : []);
    const out: ServerView[] = [];
    for (const [id, raw] of Object.entries(infos)) {
      const stored = parseJson<StoredServer | null>(raw, null);
      if (!stored) continue;
      const last = seenAt.get(id) ?? 0;
      out.push({
        ...stored,
        id,
        role,
        lastHeartbeat: last,
        alive: last >= now - this.heartbeatTimeoutMs && !stored.stopping,
        enabled: !off.has(id),
      });
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  async environment(): Promise<Record<ServerRole, EnvironmentServer[]>> {
    const out = {} as Record<ServerRole, EnvironmentServer[]>;
    for (const role of SERVER_ROLES) out[role] = (await this.list(role)).map(environmentServer);
    return out;
  }

  async mediaServers(only?: string): Promise<MediaServer[]> {
    const views = (await this.list('mediaserver')).filter((v) => only === undefined || v.id === only);
    const apps = (await this.live.read(views.map((v) => ['hgetall', this.keys.mediaServerApps(v.id)]))) as Array<
      Record<string, string>
    >;
    return views.map((v, i) => ({
      id: v.id,
      active: v.alive && v.enabled,
      applications: Object.entries(apps[i] ?? {})
        .filter(([, n]) => Number(n) > 0)
        .map(([a]) => a)
        .sort(),
      computer: v.computer ?? {
        hostName: v.id,
        ipAddresses: [...v.addresses],
        processorCount: 0,
        memoryBytes: 0,
        region: v.region,
        version: v.version,
      },
    }));
  }

  async statistics(only?: string): Promise<MediaServerStatistics[]> {
    const views = (await this.list('mediaserver')).filter((v) => only === undefined || v.id === only);
    const stats = (await this.live.read(views.map((v) => ['hgetall', this.keys.mediaServerStats(v.id)]))) as Array<
      Record<string, string>
    >;
    return views.map((v, i) => {
      const s = stats[i] ?? {};
      const n = (f: string) => Math.max(0, Number(s[f] ?? 0));
      return {
        mediaServerId: v.id,
        pendingConnections: n('pending'),
        activeConnections: n('active'),
        totalClosedConnections: n('closed'),
        totalFailedConnections: n('failed'),
        durationFailedConnections: n('failedDurationMs') / 1000,
        durationSeconds: n('durationMs') / 1000,
      };
    });
  }

  async connectors(): Promise<Connector[]> {
    return (await this.list('connector')).map((v) => ({
      id: v.id,
      type: v.type ?? 'sip',
      region: v.region,
      version: v.version,
      addresses: [...v.addresses],
      active: v.alive,
      lastHeartbeat: new Date(v.lastHeartbeat).toISOString(),
    }));
  }
}

function environmentServer(v: ServerView): EnvironmentServer {
  return {
    id: v.id,
    region: v.region,
    version: v.version,
    addresses: [...v.addresses],
    active: v.alive && v.enabled,
    lastHeartbeat: v.lastHeartbeat ? new Date(v.lastHeartbeat).toISOString() : null,
  };
}
