import { readFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { DemoRoomConfig } from './config.js';
import { securityHeaders } from './security-headers.js';
import { TokenIssuer, UpstreamError } from './token-issuer.js';
import { validateTokenAsk } from './validation.js';

/** The page's files (built into dist/public): path → [file, content type]. */
const ASSETS: Record<string, [string, string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/demo-room.js': ['demo-room.js', 'text/javascript; charset=utf-8'],
  '/switchboard-client.js': ['switchboard-client.js', 'text/javascript; charset=utf-8'],
  '/demo-room.css': ['demo-room.css', 'text/css; charset=utf-8'],
};

function problem(reply: FastifyReply, status: number, title: string, detail: string, extra: object = {}) {
  return reply
    .code(status)
    .header('content-type', 'application/problem+json')
    .send({ type: 'about:blank', title, status, detail, ...extra });
}

/**
 * The demo room's backend on one origin: the page and its scripts (the SDK's browser bundle and the
 * page script), and `POST /api/token`, which gets a client token from interface B's Token action.
 */
export async function buildDemoRoom(
  config: DemoRoomConfig,
  options: { publicDir: string; issuer?: TokenIssuer },
): Promise<FastifyInstance> {
  const issuer = options.issuer ?? new TokenIssuer(config);
  const files = new Map(
    Object.entries(ASSETS).map(([route, [file, type]]) => [
      route,
      { body: readFileSync(path.join(options.publicDir, file)), type },
    ]),
  );
  const app = Fastify({ logger: { level: config.logLevel }, bodyLimit: 4096 });
  const headers = securityHeaders(config.syncUrl);
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(headers);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => ({ status: 'ok' }));
  for (const [route, file] of files) {
    app.get(route, async (_request, reply) =>
      reply.header('content-type', file.type).header('cache-control', 'no-cache').send(file.body),
    );
  }

  app.post('/api/token', async (request, reply) => {
    const checked = validateTokenAsk(request.body);
    if ('errors' in checked) {
      return problem(reply, 400, 'Bad Request', checked.errors.map((error) => error.message).join('; '), {
        errors: checked.errors,
      });
    }
    try {
      const issued = await issuer.token(checked.ask);
      return {
        ...issued,
        name: checked.ask.name,
        room: checked.ask.room,
        applicationId: config.applicationId,
        syncUrl: config.syncUrl,
      };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      request.log.warn({ status: error.status }, error.message);
      return problem(reply, error.status, error.status === 502 ? 'Bad Gateway' : 'Service Unavailable', error.message);
    }
  });

  // Fastify's own refusals (a body that is not JSON, too large, wrong type) as Problem JSON too.
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error(error);
    return problem(
      reply,
      status,
      status === 500 ? 'Internal Server Error' : 'Bad Request',
      status === 500 ? 'unexpected error' : error.message,
    );
  });
  return app;
}
