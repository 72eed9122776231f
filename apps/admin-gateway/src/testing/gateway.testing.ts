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

export async function startTestGateway(
  natsUrl: string,
  namespace: string,
  env: Record<string, string> = {},
): Promise<TestGateway> {
  const config = loadGatewayConfig({
    NATS_URL: natsUrl,
    NATS_NAMESPACE: namespace,
    HTTP_PORT: '0',
    LOG_LEVEL: 'error',
    NATS_REQUEST_TIMEOUT_MS: '3000',
    ...env,
  });
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

/** The sum of a metric's series on the gateway's /metrics whose labels include `labels` (0: none). */
export async function metric(
  gw: Pick<TestGateway, 'url'>,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}
