import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { namespaced, RuntimeSubjects } from '@switchboard/contracts';
import {
  JsonLogger,
  Metrics,
  NatsClient,
  ReadinessService,
  SERVICE_CONFIG,
  type BaseConfig,
} from '@switchboard/service-kit';
import { Gauge } from 'prom-client';
import { parseHeartbeat } from '../model/wire.js';
import { RedisConnection } from '../store/redis-connection.js';
import { ServersStore } from '../store/servers-store.js';
import { Hearing, type HearingState } from './hearing.js';

const decoder = new TextDecoder();

/** A gap longer than this between two turns of the event loop counts as an interruption of the hearing. */
const STALL_MS = 1000;

/**
 * Heartbeats of media servers, connectors, gateways and recording services
 * (`<ns>.runtime-registry.v1.heartbeat`, core NATS publish). Every replica subscribes without a
 * queue group and writes each heartbeat to Redis; the write is idempotent (last seen = Redis
 * clock), so a stalled replica never makes a live server look gone. A body is a `Heartbeat`, or a
 * Nest event packet `{ pattern, data: Heartbeat }`.
 *
 * It also keeps this replica's `Hearing`: how long it has been able to receive and record every
 * heartbeat without interruption (NATS connected and the subscription confirmed, Redis connected,
 * no failed write, no stall). The sweeper concludes from silence only past that (see `Sweeper`).
 */
@Injectable()
export class Heartbeats implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub?: Subscription;
  private stopped = false;
  private rejected = 0;
  private unrecorded = 0;
  /**
   * Bumped on every NATS disconnect and reconnect: a confirmation (flush) of an older connection counts for nothing.
   */
  private natsRound = 0;
  private watchdog?: NodeJS.Timeout;
  private readonly hearingState: Hearing;
  private unwatchRedis?: () => void;

  constructor(
    private readonly nats: NatsClient,
    private readonly servers: ServersStore,
    private readonly logger: JsonLogger,
    private readonly readiness: ReadinessService,
    metrics: Metrics,
    private readonly redisConnection: RedisConnection,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {
    this.hearingState = new Hearing(STALL_MS, undefined, (reason, heardForMs) =>
      this.logger.event(
        'info',
        'heartbeat hearing interrupted: silence-based drops wait for a full window of hearing again',
        { reason, heardForMs: Math.round(heardForMs) },
      ),
    );
    const heardSeconds = () => this.hearing().heardForMs / 1000;
    new Gauge({
      name: 'registry_heartbeats_heard_seconds',
      help: 'How long this replica has received and recorded heartbeats without interruption (0 while it cannot); it drops the clients of a silent gateway, or forgets a silent server, only once this covers the whole window',
      registers: [metrics.registry],
      collect() {
        this.set(heardSeconds());
      },
    });
  }

  /** Subscribes once NATS is connected (in the background: the service starts while NATS is down). */
  onApplicationBootstrap() {
    this.unwatchRedis = this.redisConnection.watch(
      () => this.hearingState.sourceUp('redis', 'Redis reconnected'),
      () => this.hearingState.sourceDown('redis', 'Redis connection lost'),
    );
    if (this.redisConnection.isUp()) this.hearingState.sourceUp('redis', 'Redis connected');
    this.watchdog = setInterval(() => this.hearingState.tick(), STALL_MS / 4);
    this.watchdog.unref();
    void this.nats
      .connection$()
      .then((nc) => {
        if (this.stopped) return;
        this.sub = nc.subscribe(namespaced(this.config.natsNamespace, RuntimeSubjects.heartbeat), {
          callback: (err, msg) => {
            if (err) this.hearingState.interrupt(`heartbeat subscription: ${err.message}`);
            else void this.receive(msg);
          },
        });
        void this.watchNats(nc);
        void this.confirmSubscription(nc);
      })
      .catch(() => undefined);
    this.readiness.register('heartbeats', async () => {
      if (!this.sub || this.sub.isClosed()) throw new Error('not subscribed to heartbeats');
    });
  }

  beforeApplicationShutdown() {
    this.stopped = true;
    this.hearingState.close('replica stopping');
    if (this.watchdog) clearInterval(this.watchdog);
    this.unwatchRedis?.();
    this.sub?.unsubscribe();
  }

  /** This replica's hearing of heartbeats, read at the time of the call. */
  hearing(): HearingState {
    if (!this.sub || this.sub.isClosed()) this.hearingState.sourceDown('nats', 'not subscribed to heartbeats');
    return this.hearingState.state();
  }

  /** Something this replica heard may not have been recorded (e.g. its housekeeping pass failed). */
  interrupt(reason: string): void {
    this.hearingState.interrupt(reason);
  }

  /** Every disconnect ends the hearing; it resumes once the server confirmed the subscription again. */
  private async watchNats(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      switch (s.type) {
        case 'disconnect':
        case 'staleConnection':
        case 'forceReconnect':
        case 'close':
          this.natsRound++;
          this.hearingState.sourceDown('nats', `NATS ${s.type}`);
          break;
        case 'slowConsumer':
          this.hearingState.interrupt('NATS slow consumer');
          break;
        case 'reconnect':
          this.natsRound++;
          void this.confirmSubscription(nc);
          break;
        case 'error':
        case 'ldm':
        case 'ping':
        case 'reconnecting':
        case 'update':
          break;
      }
    }
  }

  /** The subscription is active once a PING sent after its SUB got its PONG. */
  private async confirmSubscription(nc: NatsConnection): Promise<void> {
    const round = this.natsRound;
    try {
      await nc.flush();
    } catch {
      return; // the next reconnect confirms again
    }
    if (round !== this.natsRound || this.stopped || nc.isClosed() || !this.sub || this.sub.isClosed()) return;
    this.hearingState.sourceUp('nats', round === 0 ? 'subscribed to heartbeats' : 'NATS reconnected');
  }

  private async receive(msg: Msg): Promise<void> {
    let heartbeat;
    try {
      const body = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
      const payload = body && typeof body === 'object' && 'pattern' in body && 'data' in body ? body.data : body;
      heartbeat = parseHeartbeat(payload);
    } catch (e) {
      // Reported once in a while, not per message: a misconfigured sender heartbeats every second.
      if (this.rejected++ % 100 === 0)
        this.logger.event('warn', 'heartbeat rejected', { error: (e as Error).message, rejected: this.rejected });
      return;
    }
    try {
      await this.servers.heartbeat(heartbeat);
    } catch (e) {
      // Not recorded: the silence of its server from here on is not one this replica heard.
      this.hearingState.interrupt(`heartbeat not recorded: ${(e as Error).message}`);
      if (this.unrecorded++ % 100 === 0)
        this.logger.event('warn', 'heartbeat not recorded', {
          error: (e as Error).message,
          unrecorded: this.unrecorded,
        });
    }
  }
}
