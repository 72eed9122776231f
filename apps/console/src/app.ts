import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyHttpProxy from '@fastify/http-proxy';
import fastifyStatic from '@fastify/static';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type RawServerBase,
  type RouteGenericInterface,
} from 'fastify';
import type { ConsoleConfig } from './config.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** Interface A's prefix on admin-gateway (http-contract.md). */
const INTERFACE_A_PREFIX = '/admin/api/v1.0';

/** Only what the APIs need travels upstream: the credential, the body's type, the correlation id. */
const FORWARDED_HEADERS = [
  'x-api-key',
  'authorization',
  'content-type',
  'content-length',
  'accept',
  'x-correlation-id',
];

function forwardedHeaders(headers: Record<string, string | string[] | undefined>) {
  const kept: Record<string, string | string[]> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** An API that does not answer: 504 when it is slow, 503 otherwise (Problem JSON, no internals). */
function upstreamFailure(
  reply: FastifyReply<RouteGenericInterface, RawServerBase>,
  error: Error & { code?: string },
  prefix: string,
) {
  const timedOut = error.code !== undefined && TIMEOUT_CODES.has(error.code);
  const status = timedOut ? 504 : 503;
  const api = prefix === '/api/a' ? 'interface A (admin-gateway)' : 'interface B (management-api)';
  void reply
    .code(status)
    .header('content-type', 'application/problem+json')
    .header('retry-after', '1')
    .send({
      type: 'about:blank',
      title: timedOut ? 'Gateway Timeout' : 'Service Unavailable',
      status,
      detail: `${api} ${timedOut ? 'did not answer in time' : 'cannot be reached'}`,
    });
}

/** The built web application (vite writes it beside the compiled server, in dist/public). */
export function defaultPublicDir(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), 'public');
}

/**
 * The backend-for-frontend: serves the web application and forwards `/api/a/*` to interface A and
 * `/api/b/*` to interface B, so the browser talks to one origin and the APIs stay closed to CORS.
 */
export async function buildConsole(config: ConsoleConfig, publicDir = defaultPublicDir()): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: config.logLevel } });
  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
    return payload;
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => ({ status: 'ok' }));

  const proxy = (prefix: string, upstream: string, rewritePrefix: string) =>
    app.register(fastifyHttpProxy, {
      upstream,
      prefix,
      rewritePrefix,
      undici: { headersTimeout: config.upstreamTimeoutMs, bodyTimeout: config.upstreamTimeoutMs },
      disableRequestLogging: true,
      replyOptions: {
        rewriteRequestHeaders: (_request, headers) => forwardedHeaders(headers),
        onError: (reply, { error }) => upstreamFailure(reply, error, prefix),
      },
    });
  await proxy('/api/a', config.gatewayUrl, INTERFACE_A_PREFIX);
  await proxy('/api/b', config.managementUrl, '');

  await app.register(fastifyStatic, { root: publicDir, index: 'index.html', cacheControl: false });
  return app;
}
