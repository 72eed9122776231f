import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { EventPublisher } from '../events/event-publisher.js';
import { SERVER_CAUSE } from '../runtime/connection-events.js';
import { EdgeService } from '../runtime/edge.service.js';
import { JournalRecovery } from '../runtime/journal-recovery.js';
import { SERVER_ROLES } from '../store/keys.js';
import { HousekeepingStore, type ApplicationState, type GatewayClientsPage } from '../store/housekeeping-store.js';
import { LiveStore } from '../store/live-store.js';
import { ServersStore } from '../store/servers-store.js';
import type { HearingState } from './hearing.js';
import { Heartbeats } from './heartbeats.js';

/** Every this many passes the applications index is reconciled with the applications themselves. */
const RECONCILE_EVERY = 60;

/**
 * Housekeeping, one replica at a time (a Redis lock per pass): drops the clients of gone gateways
 * and forgets silent servers (only past a window of uninterrupted hearing, see README "Silence"),
 * finishes leftover journal entries, relays parked events, and now and then repairs the applications index.
 */
@Injectable()
export class Sweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private passes = 0;
  private readonly owner = randomUUID();
  /** The hearing epoch in which each kind of hold-back was logged (once per interruption). */
  private readonly heldLogged = new Map<string, number>();

  constructor(
    private readonly store: HousekeepingStore,
    private readonly applications: LiveStore,
    private readonly servers: ServersStore,
    private readonly edge: EdgeService,
    private readonly events: EventPublisher,
    private readonly journal: JournalRecovery,
    private readonly heartbeats: Heartbeats,
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
        .catch((e: unknown) => {
          this.logger.event('warn', 'housekeeping pass failed', { error: (e as Error).message });
          // Whatever failed (Redis, most likely), silence is not concluded from data read around it.
          this.heartbeats.interrupt(`housekeeping pass failed: ${(e as Error).message}`);
        })
        .finally(() => this.schedule());
    }, this.config.sweepIntervalMs);
    this.timer.unref();
  }

  /** One pass; false when another replica holds the lock. */
  async pass(): Promise<boolean> {
    if (!(await this.store.takeLock(this.owner, Math.max(1000, this.config.sweepIntervalMs * 2)))) return false;
    try {
      await this.journal
        .recover()
        .catch((e: unknown) => this.logger.event('warn', 'journal recovery failed', { error: (e as Error).message }));
      await this.dropClientsOfGoneGateways();
      await this.forgetSilentServers();
      await this.events
        .relayOutbox()
        .catch((e: unknown) =>
          this.logger.event('warn', 'relay of parked events failed', { error: (e as Error).message }),
        );
      if (this.passes++ % RECONCILE_EVERY === 0) await this.reconcileIndex();
      return true;
    } finally {
      // Release only our own lock.
      await this.store.releaseLock(this.owner);
    }
  }

  /**
   * Unregisters the clients of every gateway silent for SERVER_HEARTBEAT_TIMEOUT_SECONDS +
   * CLIENT_DROP_GRACE_SECONDS, provided this replica heard heartbeats without interruption for at
   * least that long, before and while it read the gateways' last heartbeats. Answers how many.
   */
  async dropClientsOfGoneGateways(): Promise<number> {
    const windowMs = (this.config.serverHeartbeatTimeoutSeconds + this.config.clientDropGraceSeconds) * 1000;
    const before = this.heartbeats.hearing();
    const now = await this.servers.now();
    const cutoff = now - windowMs;
    const silent = await this.store.silentSince('gateway', cutoff);
    if (silent.length === 0) return 0;
    // Read again after the reads: an interruption (or a stall) while they ran voids them.
    const hearing = this.heartbeats.hearing();
    if (hearing.epoch !== before.epoch || hearing.heardForMs < windowMs) {
      if (this.heldLogged.get('gateways') !== hearing.epoch) {
        const clients: Record<string, number> = {};
        for (const gatewayId of silent) {
          const count = await this.store.gatewayClientCount(gatewayId);
          if (count > 0) clients[gatewayId] = count;
        }
        if (Object.keys(clients).length)
          this.holdBack(
            'gateways',
            'clients of silent gateways kept: this replica has not heard heartbeats for the whole window',
            { clients },
            hearing,
            windowMs,
          );
      }
      return 0;
    }
    const gone: string[] = [];
    let dropped = 0;
    for (const gatewayId of silent) {
      // A heartbeat recorded since the read (by any replica) means the gateway is back.
      const seen = await this.store.lastHeartbeat('gateway', gatewayId);
      if (seen !== null && seen >= cutoff) continue;
      const droppedBefore = dropped;
      let cursor: string | null = '0';
      do {
        const page: GatewayClientsPage = await this.store.gatewayClients(gatewayId, cursor, 200);
        cursor = page.next;
        for (const ref of page.clients) {
          const { applicationId, ...client } = ref;
          try {
            if (await this.edge.unregisterClient(applicationId, client, SERVER_CAUSE, gatewayId)) dropped++;
          } catch (e) {
            this.logger.event('warn', 'could not drop a client of a gone gateway', {
              gatewayId,
              applicationId,
              clientId: client.clientId,
              error: (e as Error).message,
            });
            continue;
          }
          await this.store.forgetGatewayClient(gatewayId, ref);
        }
      } while (cursor !== null);
      if (dropped > droppedBefore) gone.push(gatewayId);
    }
    if (dropped)
      this.logger.event('info', 'clients of gone gateways unregistered', { gateways: gone, clients: dropped });
    return dropped;
  }

  /**
   * Forgets the servers silent for SERVER_RETENTION_SECONDS, provided this replica heard heartbeats
   * without interruption for at least that long (forgetting a media server also drops its
   * statistics and its PATCH active:false).
   */
  async forgetSilentServers(): Promise<void> {
    const retentionMs = this.config.serverRetentionSeconds * 1000;
    const hearing = this.heartbeats.hearing();
    if (hearing.heardForMs < retentionMs) {
      const cutoff = (await this.servers.now()) - retentionMs;
      const silent: Record<string, number> = {};
      for (const role of SERVER_ROLES) {
        const count = await this.store.silentCount(role, cutoff);
        if (count > 0) silent[role] = count;
      }
      if (Object.keys(silent).length)
        this.holdBack(
          'servers',
          'silent servers kept: this replica has not heard heartbeats for the whole retention',
          { servers: silent },
          hearing,
          retentionMs,
        );
      return;
    }
    for (const role of SERVER_ROLES) {
      const gone = await this.servers.expire(role);
      if (gone.length) this.logger.event('info', 'servers forgotten after retention', { role, ids: gone });
    }
  }

  private holdBack(
    kind: string,
    message: string,
    fields: Record<string, unknown>,
    hearing: HearingState,
    windowMs: number,
  ) {
    if (this.heldLogged.get(kind) === hearing.epoch) return;
    this.heldLogged.set(kind, hearing.epoch);
    this.logger.event('info', message, {
      ...fields,
      reason: hearing.reason,
      heardForMs: Math.round(hearing.heardForMs),
      windowMs,
    });
  }

  async reconcileIndex(): Promise<void> {
    const index = await this.applications.appsIndex();
    let cursor: string | null = '0';
    do {
      const page: { states: ApplicationState[]; next: string | null } = await this.store.applicationStates(cursor);
      cursor = page.next;
      for (const { applicationId, inUse, gen, organizationId } of page.states) {
        if (!gen || inUse === null) continue;
        const known = index.get(applicationId);
        if (known && known.gen >= Number(gen)) continue;
        await this.applications.indexApply(applicationId, {
          gen,
          state: inUse === '1' ? 1 : 0,
          org: organizationId ?? '',
        });
      }
    } while (cursor !== null);
    // Entries of applications unused for longer than their bookkeeping lives.
    const cutoff = (await this.servers.now()) - this.config.applicationIdleTtlSeconds * 1000;
    const stale = [...index].filter(([, v]) => !v.inUse && v.gen < cutoff).map(([a]) => a);
    for (const a of stale) await this.store.dropStaleIndexEntry(a, cutoff);
  }
}
