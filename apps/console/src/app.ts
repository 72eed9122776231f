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
import type { ConnectionKey, ConnectionStatsStore } from './connection-stats.js';
import { registerOAuthRoutes } from './oauth.js';
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
  const api =
    prefix === '/api/a'
      ? 'interface A (admin-gateway)'
      : prefix === '/recordings'
        ? 'recording-service'
        : 'interface B (management-api)';
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

const CONNECTION_PARAMS = ['applicationId', 'channelId', 'userId', 'deviceId', 'clientId', 'connectionId'] as const;
type ConnectionParams = Record<(typeof CONNECTION_PARAMS)[number], string>;

/**
 * `GET /api/stats/{a}/{ch}/{u}/{d}/{cl}/{cn}`: the connection's recent stats samples. Interface A
 * itself answers whether the caller may see the connection (its connection read, with the caller's
 * credential): a refusal or a 404 is handed back as it came.
 */
function registerStatsRoute(app: FastifyInstance, config: ConsoleConfig, stats: ConnectionStatsStore | undefined) {
  app.get<{ Params: ConnectionParams }>(
    '/api/stats/:applicationId/:channelId/:userId/:deviceId/:clientId/:connectionId',
    async (request, reply) => {
      if (!stats) {
        return reply.code(503).header('content-type', 'application/problem+json').send({
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: 'Connection stats need NATS_URL: the console reads them from the runtime events',
        });
      }
      const key = CONNECTION_PARAMS.map((name) => request.params[name]) as unknown as ConnectionKey;
      const [a, ch, u, d, cl, cn] = key.map(encodeURIComponent);
      const connectionUrl =
        `${config.gatewayUrl}${INTERFACE_A_PREFIX}/applications/${a}/channels/${ch}` +
        `/users/${u}/devices/${d}/clients/${cl}/connections/${cn}`;
      const credential = forwardedHeaders(request.headers);
      const headers: Record<string, string> = { accept: 'application/json' };
      for (const name of ['x-api-key', 'authorization', 'x-correlation-id']) {
        if (typeof credential[name] === 'string') headers[name] = credential[name];
      }
      let answer: Response;
      try {
        answer = await fetch(connectionUrl, { headers, signal: AbortSignal.timeout(config.upstreamTimeoutMs) });
      } catch (error) {
        const failure = error as Error & { code?: string };
        if (failure.name === 'TimeoutError') failure.code = 'ETIMEDOUT';
        return upstreamFailure(reply, failure, '/api/a');
      }
      if (!answer.ok) {
        return reply
          .code(answer.status)
          .header('content-type', answer.headers.get('content-type') ?? 'application/problem+json')
          .send(await answer.text());
      }
      return { samples: stats.samplesOf(key) };
    },
  );
}

/**
 * `/recordings/files/<token>` → recording-service `/files/<token>`: the players and downloads stay on
 * this origin (CSP `media-src 'self'`). The signed, expiring token is the only authority; no
 * credential travels, only the byte range a player asks for.
 */
async function proxyRecordingFiles(app: FastifyInstance, recordingsUrl: string, timeoutMs: number) {
  await app.register(fastifyHttpProxy, {
    upstream: recordingsUrl,
    prefix: '/recordings/files',
    rewritePrefix: '/files',
    httpMethods: ['GET', 'HEAD'],
    undici: { headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
    disableRequestLogging: true,
    replyOptions: {
      rewriteRequestHeaders: (_request, headers) => {
        const kept: Record<string, string | string[]> = {};
        for (const name of ['range', 'if-range', 'accept']) if (headers[name] !== undefined) kept[name] = headers[name];
        return kept;
      },
      onError: (reply, { error }) => upstreamFailure(reply, error, '/recordings'),
    },
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
export async function buildConsole(
  config: ConsoleConfig,
  publicDir = defaultPublicDir(),
  stats?: ConnectionStatsStore,
): Promise<FastifyInstance> {
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
  registerStatsRoute(app, config, stats);
  registerOAuthRoutes(app, config);
  if (config.recordingsUrl) await proxyRecordingFiles(app, config.recordingsUrl, config.upstreamTimeoutMs);

  await app.register(fastifyStatic, { root: publicDir, index: 'index.html', cacheControl: false });
  return app;
}
