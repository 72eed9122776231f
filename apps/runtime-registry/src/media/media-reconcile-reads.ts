import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { storedConnection } from '../model/records.js';
import { LiveReads } from '../store/live-reads.js';
import { LiveStore } from '../store/live-store.js';
import type { HeldConnectionsReader } from './media-reconcile.js';
import type { HeldConnection } from './media-reconcile-plan.js';

/** The registry connections placed on given media servers, read channel by channel. */
@Injectable()
export class RegistryConnectionsOnServers implements HeldConnectionsReader {
  constructor(
    private readonly reads: LiveReads,
    private readonly store: LiveStore,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  now(): Promise<number> {
    return this.store.now();
  }

  async onServers(mediaServerIds: ReadonlySet<string>): Promise<Map<string, HeldConnection[]>> {
    const out = new Map<string, HeldConnection[]>([...mediaServerIds].map((id) => [id, []]));
    const applications = new Set<string>();
    for (const id of mediaServerIds) {
      const counts = await this.redis.hgetall(this.store.keys.mediaServerApps(id));
      for (const [applicationId, n] of Object.entries(counts)) if (Number(n) > 0) applications.add(applicationId);
    }
    for (const applicationId of applications) {
      for (const channelId of await this.reads.activeChannelIds(applicationId)) {
        const paths = await this.reads.channelConnections(applicationId, channelId);
        for (const view of await this.reads.connections(applicationId, channelId, paths)) {
          const serverId = view.connection.mediaServerId;
          const list = serverId === undefined ? undefined : out.get(serverId);
          if (!list) continue;
          const stored = storedConnection(view.connection);
          list.push({
            applicationId,
            channelId,
            userId: view.userId,
            deviceId: view.deviceId,
            clientId: view.clientId,
            connectionId: view.connectionId,
            type: stored.type,
            state: stored.state,
            openedAt: stored.openedAt,
            connectedAt: stored.connectedAt,
          });
        }
      }
    }
    return out;
  }
}
