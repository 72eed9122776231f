/** Runs admin-gateway in the test process on a free port, against the jest run's real NATS. */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import { buildAdminGateway } from '../app.js';
import { loadGatewayConfig, type GatewayConfig } from '../config.js';
import { GATEWAY_ID } from '../sync/gateway-identity.js';

export interface TestGateway {
  app: NestFastifyApplication;
  config: GatewayConfig;
  url: string;
  syncUrl: string;
  gatewayId: string;
  close(): Promise<void>;
}

export async function startTestGateway(natsUrl: string, namespace: string, env: Record<string, string> = {}): Promise<TestGateway> {
  const config = loadGatewayConfig({ NATS_URL: natsUrl, NATS_NAMESPACE: namespace, HTTP_PORT: '0', LOG_LEVEL: 'error', NATS_REQUEST_TIMEOUT_MS: '3000', ...env });
  const app = await buildAdminGateway(config);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    config,
    url: `http://127.0.0.1:${port}`,
    syncUrl: `ws://127.0.0.1:${port}/sync`,
    gatewayId: app.get<string>(GATEWAY_ID),
    close: () => app.close(),
  };
}
