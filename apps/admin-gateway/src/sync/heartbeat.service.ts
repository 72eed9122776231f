import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RuntimeSubjects, type Heartbeat } from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { encodeNatsEvent, GATEWAY_ID } from './gateway-identity.js';

export const GATEWAY_VERSION = '0.1.0';

/**
 * Announces this replica to runtime-registry (`runtime-registry.v1.heartbeat`, role `gateway`) every
 * GATEWAY_HEARTBEAT_INTERVAL_MS, with the URL its clients reach `/sync` at; a last heartbeat with
 * `active: false` on shutdown. The registry lists gateways in the application environment and may
 * drop the clients of a gateway that stopped heartbeating.
 */
@Injectable()
export class HeartbeatService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
    private readonly nats: NatsClient,
    private readonly adapterHost: HttpAdapterHost,
    private readonly logger: JsonLogger,
  ) {}

  /** SYNC_PUBLIC_URL, or the address the HTTP server listens on (its real port once listening). */
  syncUrl(): string {
    if (this.config.syncPublicUrl) return this.config.syncPublicUrl;
    const address = this.adapterHost.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null | undefined;
    const port = address && typeof address === 'object' ? address.port : this.config.httpPort;
    return `ws://${this.config.httpHost}:${port}/sync`;
  }

  heartbeat(active = true): Heartbeat {
    const syncUrl = this.syncUrl();
    return {
      role: 'gateway',
      server: {
        id: this.gatewayId,
        region: this.config.gatewayRegion ?? null,
        version: GATEWAY_VERSION,
        addresses: [syncUrl],
        active,
        lastHeartbeat: new Date().toISOString(),
      },
    };
  }

  onApplicationBootstrap() {
    // The first beat goes out once the server listens (the port may be chosen at listen time).
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server || server.listening) void this.beat();
    else server.once('listening', () => void this.beat());
    this.timer = setInterval(() => void this.beat(), this.config.gatewayHeartbeatIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown() {
    if (this.timer) clearInterval(this.timer);
    await this.beat(false);
  }

  private async beat(active = true): Promise<void> {
    try {
      let timer: NodeJS.Timeout | undefined;
      const connection = await Promise.race([
        this.nats.connection$(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('NATS is not connected')), this.config.gatewayHeartbeatIntervalMs);
        }),
      ]).finally(() => clearTimeout(timer));
      connection.publish(
        this.nats.subject(RuntimeSubjects.heartbeat),
        encodeNatsEvent(RuntimeSubjects.heartbeat, this.heartbeat(active)),
      );
    } catch (e) {
      this.logger.event('warn', 'heartbeat not published', { error: (e as Error).message });
    }
  }
}
