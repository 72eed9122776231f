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

  async heartbeat(heartbeat: Heartbeat & { type?: string }): Promise<void> {
    const server = heartbeat.server;
    const stored: StoredServer = {
      id: server.id,
      type: heartbeat.type ?? null,
      region: server.region ?? null,
      version: server.version ?? null,
      addresses: server.addresses ?? [],
      capacity: typeof server.capacity === 'number' ? server.capacity : null,
      computer: server.computer ?? null,
      stopping: server.active === false,
    };
    await runScript(this.redis, 'rtHeartbeat', this.keys.servers(), {
      role: heartbeat.role,
      id: server.id,
      info: JSON.stringify(stored),
    });
  }

  /** Places a connection on the least-loaded eligible media server; null when none is available. */
  async place(applicationId: string): Promise<string | null> {
    const placed = await runScript<{ id: string | false }>(this.redis, 'rtPlace', this.keys.servers(), {
      app: applicationId,
      timeoutMs: this.heartbeatTimeoutMs,
    });
    return placed.id || null;
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
    const expired = await runScript<string[]>(this.redis, 'rtExpireServers', this.keys.servers(), {
      role,
      retentionMs: this.config.serverRetentionSeconds * 1000,
    });
    return Array.isArray(expired) ? expired : [];
  }

  /** The Redis clock (ms), the clock every heartbeat was stamped with. */
  async now(): Promise<number> {
    return this.live.now();
  }

  async list(role: ServerRole): Promise<ServerView[]> {
    const keys = this.keys;
    const [infos, seen, disabled, time] = (await this.live.read([
      ['hgetall', keys.serverRole(role)],
      ['zrange', keys.serverSeen(role), 0, -1, 'WITHSCORES'],
      ['smembers', keys.mediaServerDisabled()],
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
    return out.sort((left, right) => left.id.localeCompare(right.id));
  }

  async environment(): Promise<Record<ServerRole, EnvironmentServer[]>> {
    const out = {} as Record<ServerRole, EnvironmentServer[]>;
    for (const role of SERVER_ROLES) out[role] = (await this.list(role)).map(environmentServer);
    return out;
  }

  async mediaServers(only?: string): Promise<MediaServer[]> {
    const views = (await this.list('mediaserver')).filter((view) => only === undefined || view.id === only);
    const apps = (await this.live.read(views.map((view) => ['hgetall', this.keys.mediaServerApps(view.id)]))) as Array<
      Record<string, string>
    >;
    return views.map((view, i) => ({
      id: view.id,
      active: view.alive && view.enabled,
      applications: Object.entries(apps[i] ?? {})
        .filter(([, connections]) => Number(connections) > 0)
        .map(([applicationId]) => applicationId)
        .sort(),
      computer: view.computer ?? {
        hostName: view.id,
        ipAddresses: [...view.addresses],
        processorCount: 0,
        memoryBytes: 0,
        region: view.region,
        version: view.version,
      },
    }));
  }

  async statistics(only?: string): Promise<MediaServerStatistics[]> {
    const views = (await this.list('mediaserver')).filter((view) => only === undefined || view.id === only);
    const stats = (await this.live.read(
      views.map((view) => ['hgetall', this.keys.mediaServerStats(view.id)]),
    )) as Array<Record<string, string>>;
    return views.map((view, i) => {
      const counts = stats[i] ?? {};
      const count = (field: string) => Math.max(0, Number(counts[field] ?? 0));
      return {
        mediaServerId: view.id,
        pendingConnections: count('pending'),
        activeConnections: count('active'),
        totalClosedConnections: count('closed'),
        totalFailedConnections: count('failed'),
        durationFailedConnections: count('failedDurationMs') / 1000,
        durationSeconds: count('durationMs') / 1000,
      };
    });
  }

  async connectors(): Promise<Connector[]> {
    return (await this.list('connector')).map((view) => ({
      id: view.id,
      type: view.type ?? 'sip',
      region: view.region,
      version: view.version,
      addresses: [...view.addresses],
      active: view.alive,
      lastHeartbeat: new Date(view.lastHeartbeat).toISOString(),
    }));
  }
}

function environmentServer(view: ServerView): EnvironmentServer {
  return {
    id: view.id,
    region: view.region,
    version: view.version,
    addresses: [...view.addresses],
    active: view.alive && view.enabled,
    lastHeartbeat: view.lastHeartbeat ? new Date(view.lastHeartbeat).toISOString() : null,
  };
}
