import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { pushSubject, type PushBatch } from '@switchboard/contracts';
import { JsonLogger, NatsClient, ReadinessService, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { Subscription } from '@nats-io/transport-node';
import type { GatewayConfig } from '../config.js';
import { decodeNatsJson, GATEWAY_ID } from './gateway-identity.js';
import { SessionStore } from './session.store.js';
import { SyncMetrics } from './sync.metrics.js';

/**
 * Hands the pushes for this replica's clients (`pushSubject(namespace, gatewayId)`) to SessionStore#push.
 * Pushes for clients it does not hold, and stale settings pushes, are counted and dropped.
 */
@Injectable()
export class PushListener implements OnApplicationBootstrap {
  private subscription?: Subscription;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
    private readonly nats: NatsClient,
    private readonly store: SessionStore,
    private readonly metrics: SyncMetrics,
    private readonly readiness: ReadinessService,
    private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap() {
    const subscribed = this.nats.connection$().then((nc) => {
      this.subscription = nc.subscribe(pushSubject(this.config.natsNamespace, this.gatewayId), {
        callback: (err, msg) => {
          if (err) return;
          let batch: PushBatch;
          try {
            batch = decodeNatsJson(msg.data) as PushBatch;
          } catch {
            this.logger.event('warn', 'unreadable push batch');
            return;
          }
          this.dispatch(batch);
        },
      });
    });
    subscribed.catch(() => undefined);
    this.readiness.register('sync-pushes', async () => {
      await subscribed;
      if (!this.subscription || this.subscription.isClosed()) throw new Error('not subscribed to pushes');
    });
  }

  // No unsubscribe at shutdown: the subscription lives until the NATS connection drains, so pushes
  // still reach clients while the gateway unregisters them.

  dispatch(batch: PushBatch): void {
    if (!batch || !Array.isArray(batch.deliveries)) {
      this.logger.event('warn', 'push batch without deliveries');
      return;
    }
    for (const delivery of batch.deliveries) {
      const push = delivery?.push;
      const session = delivery?.client && push ? this.store.get(delivery.client) : undefined;
      if (!session || session.ended) {
        this.metrics.pushes.inc({ outcome: 'unknown-client' });
        continue;
      }
      const outcome = this.store.push(session, push!);
      // `delivered` is counted by the store (delivered, kept or dropped).
      if (outcome !== 'delivered') this.metrics.pushes.inc({ outcome });
    }
  }
}
