import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DomainError, type ConnectionState } from '@switchboard/contracts';
import { JsonLogger, REDIS, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import type { RegistryConfig } from '../config.js';
import { ChangeDelivery } from '../runtime/change-delivery.js';
import { SERVER_CAUSE } from '../runtime/connection-events.js';
import { ConnectionLifecycle } from '../runtime/connection-lifecycle.js';
import { LiveReads } from '../store/live-reads.js';
import { LiveStore } from '../store/live-store.js';
import { NatsMediaAgents, type MediaAgents } from './media-control-agent.js';
import { reconcileDecisions, type HeldConnection, type ReconcileDecisions } from './media-reconcile-plan.js';
import { RegistryConnectionsOnServers } from './media-reconcile-reads.js';

/** The lease of the reconciliation lock (a pass that outlives it may overlap another replica's). */
const LOCK_MS = 30_000;
/** The first pass waits this long after start: media servers' heartbeats are heard again by then. */
const FIRST_PASS_DELAY_MS = 1000;
/** A pass asked for by a media event waits this long past the grace (the events of one clean-up come together). */
const SOON_DELAY_MS = 300;

/** Marks a registry connection failed because its media server lost it (a seam regev's intake may replace). */
export interface MediaConnectionFailer {
  failLostConnection(connection: HeldConnection): Promise<void>;
}

/** The registry's connections on the Janus servers (the reconciliation's read). */
export interface HeldConnectionsReader {
  onServers(mediaServerIds: ReadonlySet<string>): Promise<Map<string, HeldConnection[]>>;
  now(): Promise<number>;
}

export interface ReconcilePassResult {
  servers: number;
  decisions: Record<string, ReconcileDecisions>;
}

/** One pass over every active Janus server (see README, "Media control"). */
export async function reconcilePass(
  agents: MediaAgents,
  held: HeldConnectionsReader,
  failer: MediaConnectionFailer,
  graceMs: number,
): Promise<ReconcilePassResult> {
  const servers = await agents.janusServers();
  const decisions: Record<string, ReconcileDecisions> = {};
  // Listings first, registry after: a Janus connection always has its registry record before it.
  const listings = new Map<string, Awaited<ReturnType<MediaAgents['send']>>>();
  await Promise.all(
    [...servers].map(async (id) => {
      listings.set(id, await agents.send(id, { kind: 'rooms.list' }).catch(() => null));
    }),
  );
  const byServer = await held.onServers(servers);
  const now = await held.now();
  for (const [id, listing] of listings) {
    if (!listing || !('rooms' in listing)) continue;
    const d = reconcileDecisions(listing.rooms, byServer.get(id) ?? [], now, graceMs);
    decisions[id] = d;
    await Promise.all([
      ...d.destroy.map((room) => agents.send(id, { kind: 'room.destroy', ...room }).catch(ignoreGone)),
      ...d.leave.map((c) => agents.send(id, { kind: 'connection.leave', ...c }).catch(ignoreGone)),
      ...d.fail.map((c) => failer.failLostConnection(c)),
    ]);
  }
  return { servers: servers.size, decisions };
}

function ignoreGone(e: unknown): null {
  if (e instanceof DomainError && e.code === 'NotFound') return null;
  throw e;
}

/**
 * Runs `reconcilePass` at start and every MEDIA_RECONCILE_INTERVAL_MS, one replica at a time (a
 * Redis lock, as the housekeeping pass).
 */
@Injectable()
export class MediaReconciler implements OnApplicationBootstrap, BeforeApplicationShutdown, MediaConnectionFailer {
  private timer?: NodeJS.Timeout;
  /** When the pending timer fires (a later schedule does not replace a sooner one). */
  private due = Infinity;
  private stopped = false;
  private running?: Promise<unknown>;
  private readonly owner = randomUUID();
  private readonly lockKey: string;

  constructor(
    private readonly agents: NatsMediaAgents,
    private readonly held: RegistryConnectionsOnServers,
    private readonly connections: ConnectionLifecycle,
    private readonly effects: ChangeDelivery,
    private readonly reads: LiveReads,
    private readonly logger: JsonLogger,
    store: LiveStore,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {
    this.lockKey = `${store.keys.root}media-reconcile:lock`;
  }

  onApplicationBootstrap() {
    this.schedule(FIRST_PASS_DELAY_MS);
  }

  async beforeApplicationShutdown() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /**
   * A pass shortly, not at the next interval: a media-agent destroyed rooms it could not adopt
   * (`room.ended` `cleaned-up`), so the connections the registry holds in them are lost now. It waits
   * out the grace, which would spare the connections that connected just before.
   */
  soon(): void {
    this.schedule(this.config.mediaReconcileGraceMs + SOON_DELAY_MS);
  }

  private schedule(ms: number) {
    const due = Date.now() + ms;
    if (this.stopped || (this.timer && this.due <= due)) return;
    clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.passUnderLock().finally(() => this.schedule(this.config.mediaReconcileIntervalMs));
    }, ms);
    this.timer.unref();
  }

  /** A pass if no other replica is running one; null when it was. */
  async passUnderLock(): Promise<ReconcilePassResult | null> {
    try {
      if ((await this.redis.set(this.lockKey, this.owner, 'PX', LOCK_MS, 'NX')) !== 'OK') return null;
    } catch {
      return null;
    }
    try {
      const result = await reconcilePass(this.agents, this.held, this, this.config.mediaReconcileGraceMs);
      const removed = Object.values(result.decisions).reduce(
        (n, d) => n + d.leave.length + d.destroy.length + d.fail.length,
        0,
      );
      if (removed > 0) this.logger.event('info', 'media reconciliation corrected the media servers', { ...result });
      return result;
    } catch (e) {
      this.logger.event('warn', 'media reconciliation pass failed', { error: (e as Error).message });
      return null;
    } finally {
      await this.redis.eval(RELEASE, 1, this.lockKey, this.owner).catch(() => undefined);
    }
  }

  async failLostConnection(c: HeldConnection): Promise<void> {
    const ref = { userId: c.userId, deviceId: c.deviceId, clientId: c.clientId, channelId: c.channelId };
    const error = { code: 'MediaLost', message: 'The media server no longer holds the connection.' };
    try {
      const from: readonly ConnectionState[] = ['connected'];
      const events = await this.connections.moveState(
        c.applicationId,
        { ...ref, connectionId: c.connectionId },
        'failed',
        from,
        error,
        SERVER_CAUSE,
      );
      const client = { applicationId: c.applicationId, userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
      const gatewayId = await this.reads.gatewayOf(client);
      const push = { type: 'connection.ended' as const, channelId: c.channelId, connectionId: c.connectionId };
      await this.effects.deliver([{ gatewayId, client, push: { ...push, reason: 'failed' } }], events);
    } catch (e) {
      // Moved on meanwhile (closed, or connected again): nothing to fail.
      if (e instanceof DomainError && (e.code === 'NotFound' || e.code === 'Conflict')) return;
      throw e;
    }
  }
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;
