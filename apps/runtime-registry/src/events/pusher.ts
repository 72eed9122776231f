import { Inject, Injectable } from '@nestjs/common';
import { pushSubject, type ClientRef, type PushBatch, type ServerPush } from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG, type BaseConfig } from '@switchboard/service-kit';

const encoder = new TextEncoder();

export interface Delivery {
  gatewayId: string | null;
  client: ClientRef;
  push: ServerPush;
}

/**
 * Sends pushes to the gateway replicas holding the clients: one `PushBatch` per gateway on
 * `pushSubject(ns, gatewayId)` (core NATS publish: a push is for a live socket, at most once).
 */
@Injectable()
export class Pusher {
  constructor(
    private readonly nats: NatsClient,
    private readonly logger: JsonLogger,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {}

  /** Groups deliveries by gateway and publishes them; returns how many were sent. */
  async send(deliveries: Delivery[]): Promise<number> {
    const byGateway = new Map<string, PushBatch['deliveries']>();
    let sent = 0;
    for (const d of deliveries) {
      if (!d.gatewayId) continue;
      let list = byGateway.get(d.gatewayId);
      if (!list) byGateway.set(d.gatewayId, (list = []));
      list.push({ client: d.client, push: d.push });
      sent++;
    }
    if (byGateway.size === 0) return 0;
    const nc = await this.nats.connection$();
    for (const [gatewayId, list] of byGateway) {
      // Bounded batches keep each NATS message well below the server's max payload.
      for (let i = 0; i < list.length; i += 500) {
        const batch: PushBatch = { deliveries: list.slice(i, i + 500) };
        nc.publish(pushSubject(this.config.natsNamespace, gatewayId), encoder.encode(JSON.stringify(batch)));
      }
    }
    // The pushes reach the NATS server before the caller is answered: a caller that sees the
    // answer can rely on the pushes being on their way (and tests can check them at once).
    await nc.flush();
    this.logger.event('debug', 'pushed', { deliveries: sent, gateways: byGateway.size });
    return sent;
  }
}
