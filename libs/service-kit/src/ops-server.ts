import http from 'node:http';
import { readinessAnswer, type ReadinessService } from './health.js';
import { METRICS_CONTENT_TYPE, type Metrics } from './metrics.js';

/**
 * `/healthz`, `/readyz` and `/metrics` on a port of their own (OPS_PORT): for deployments where the
 * API port is public (an ingress routes `/` to interface B) and the probes and the Prometheus
 * scrape must stay inside. Answers exactly what those routes answer on the API port; anything else
 * is 404, a method other than GET or HEAD 405.
 */
export async function startOpsServer(o: {
  host: string;
  port: number;
  readiness: ReadinessService;
  metrics: Metrics;
}): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    void answer(req, res, o).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"status":"error"}');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

async function answer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  o: { readiness: ReadinessService; metrics: Metrics },
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  const send = (status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics')
    return send(404, 'application/json', '{"status":"not found"}');
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(405, 'application/json', '{"status":"method not allowed"}');
  if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
  if (path === '/metrics') return send(200, METRICS_CONTENT_TYPE, await o.metrics.registry.metrics());
  const { status, body } = await readinessAnswer(o.readiness);
  send(status, 'application/json', JSON.stringify(body));
}
