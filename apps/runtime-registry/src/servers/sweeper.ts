import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { EventPublisher } from '../events/event-publisher.js';
import { SERVER_CAUSE } from '../runtime/context.js';
import { EdgeService } from '../runtime/edge.service.js';
import { SERVER_ROLES } from '../store/keys.js';
import { LiveStore } from '../store/live-store.js';
import { ServersStore } from '../store/servers-store.js';

/** Every this many passes the applications index is reconciled with the applications themselves. */
const RECONCILE_EVERY = 60;

/**
 * Housekeeping, one replica at a time (a Redis lock per pass):
 * - clients held by a gateway replica without heartbeat for SERVER_HEARTBEAT_TIMEOUT_SECONDS +
 *   CLIENT_DROP_GRACE_SECONDS are unregistered (their connections closed, events published);
 * - servers without heartbeat for SERVER_RETENTION_SECONDS are forgotten;
 * - events parked while JetStream was unavailable are relayed;
 * - now and then, the applications index is reconciled with the applications' own in-use flags
 *   (repairs an index update lost to a crash between the two steps), and long-unused entries go.
 */
@Injectable()
export class Sweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private passes = 0;
  private readonly owner = randomUUID();

  constructor(
    private readonly store: LiveStore,
    private readonly servers: ServersStore,
    private readonly edge: EdgeService,
    private readonly events: EventPublisher,
    private readonly logger: JsonLogger,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  onApplicationBootstrap() {
    this.schedule();
  }

  /** Stops before the connections close: a pass in flight finishes first. */
  async beforeApplicationShutdown() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .then(() => undefined)
        .catch((e: unknown) => this.logger.event('warn', 'housekeeping pass failed', { error: (e as Error).message }))
        .finally(() => this.schedule());
    }, this.config.sweepIntervalMs);
    this.timer.unref();
  }

  /** One pass; false when another replica holds the lock. */
  async pass(): Promise<boolean> {
    const lock = this.store.keys.sweeperLock();
    const got = await this.store.redis.set(lock, this.owner, 'PX', Math.max(1000, this.config.sweepIntervalMs * 2), 'NX');
    if (got !== 'OK') return false;
    try {
      await this.dropClientsOfGoneGateways();
      for (const role of SERVER_ROLES) {
        const gone = await this.servers.expire(role);
        if (gone.length) this.logger.event('info', 'servers forgotten after retention', { role, ids: gone });
      }
      await this.events.relayOutbox().catch((e: unknown) => this.logger.event('warn', 'relay of parked events failed', { error: (e as Error).message }));
      if (this.passes++ % RECONCILE_EVERY === 0) await this.reconcileIndex();
      return true;
    } finally {
      // Release only our own lock.
      await this.store.redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, lock, this.owner);
    }
  }

  async dropClientsOfGoneGateways(): Promise<number> {
    const now = await this.servers.now();
    const cutoff = now - (this.config.serverHeartbeatTimeoutSeconds + this.config.clientDropGraceSeconds) * 1000;
    const gone = await this.store.redis.zrangebyscore(this.store.keys.serverSeen('gateway'), '-inf', `(${cutoff}`);
    let dropped = 0;
    for (const gatewayId of gone) {
      const key = this.store.keys.gatewayClients(gatewayId);
      let cursor = '0';
      do {
        const [next, members] = await this.store.redis.sscan(key, cursor, 'COUNT', 200);
        cursor = next;
        for (const member of members) {
          const { applicationId, ...client } = this.store.parseGatewayMember(member);
          try {
            if (await this.edge.unregisterClient(applicationId, client, SERVER_CAUSE, gatewayId)) dropped++;
          } catch (e) {
            this.logger.event('warn', 'could not drop a client of a gone gateway', { gatewayId, applicationId, clientId: client.clientId, error: (e as Error).message });
            continue;
          }
          await this.store.redis.srem(key, member);
        }
      } while (cursor !== '0');
    }
    if (dropped) this.logger.event('info', 'clients of gone gateways unregistered', { gateways: gone, clients: dropped });
    return dropped;
  }

  async reconcileIndex(): Promise<void> {
    const redis = this.store.redis;
    const index = await this.store.appsIndex();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', this.store.keys.appBasePattern(), 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const a = this.store.keys.appOf(key);
        if (a === null) continue;
        const [inUse, gen, org] = await redis.hmget(key, 'inUse', 'gen', 'organizationId');
        if (!gen || inUse === null) continue;
        const known = index.get(a);
        if (known && known.gen >= Number(gen)) continue;
        await this.store.indexApply(a, { gen, state: inUse === '1' ? 1 : 0, org: org ?? '' });
      }
    } while (cursor !== '0');
    // Entries of applications unused for longer than their bookkeeping lives.
    const cutoff = (await this.servers.now()) - this.config.applicationIdleTtlSeconds * 1000;
    const stale = [...index].filter(([, v]) => !v.inUse && v.gen < cutoff).map(([a]) => a);
    for (const a of stale) {
      await redis.eval(
        "local v = redis.call('HGET', KEYS[1], ARGV[1]) if v and string.match(v, '^%d+:0:') and tonumber(string.match(v, '^(%d+)')) < tonumber(ARGV[2]) then return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0",
        1,
        this.store.keys.appsIndex(),
        a,
        String(cutoff),
      );
    }
  }
}
