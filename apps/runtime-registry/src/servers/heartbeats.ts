import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from '@nats-io/transport-node';
import { namespaced, RuntimeSubjects } from '@switchboard/contracts';
import { JsonLogger, NatsClient, ReadinessService, SERVICE_CONFIG, type BaseConfig } from '@switchboard/service-kit';
import { parseHeartbeat } from '../model/wire.js';
import { ServersStore } from '../store/servers-store.js';

const decoder = new TextDecoder();

/**
 * Heartbeats of media servers, connectors, gateways and recording services
 * (`<ns>.runtime-registry.v1.heartbeat`, core NATS publish). Every replica subscribes without a
 * queue group and writes each heartbeat to Redis; the write is idempotent (last seen = Redis
 * clock), so a stalled replica never makes a live server look gone. A body is a `Heartbeat`, or a
 * Nest event packet `{ pattern, data: Heartbeat }`.
 */
@Injectable()
export class Heartbeats implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub?: Subscription;
  private stopped = false;
  private rejected = 0;

  constructor(
    private readonly nats: NatsClient,
    private readonly servers: ServersStore,
    private readonly logger: JsonLogger,
    private readonly readiness: ReadinessService,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {}

  /** Subscribes once NATS is connected (in the background: the service starts while NATS is down). */
  onApplicationBootstrap() {
    void this.nats
      .connection$()
      .then((nc) => {
        if (this.stopped) return;
        this.sub = nc.subscribe(namespaced(this.config.natsNamespace, RuntimeSubjects.heartbeat), { callback: (err, msg) => void this.receive(err, msg) });
      })
      .catch(() => undefined);
    this.readiness.register('heartbeats', async () => {
      if (!this.sub || this.sub.isClosed()) throw new Error('not subscribed to heartbeats');
    });
  }

  beforeApplicationShutdown() {
    this.stopped = true;
    this.sub?.unsubscribe();
  }

  private async receive(err: Error | null, msg: Msg): Promise<void> {
    if (err) return;
    try {
      const body = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
      const payload = body && typeof body === 'object' && 'pattern' in body && 'data' in body ? body.data : body;
      await this.servers.heartbeat(parseHeartbeat(payload));
    } catch (e) {
      // Reported once in a while, not per message: a misconfigured sender heartbeats every second.
      if (this.rejected++ % 100 === 0) this.logger.event('warn', 'heartbeat rejected', { error: (e as Error).message, rejected: this.rejected });
    }
  }
}
