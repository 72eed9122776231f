import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildConsole } from './app.js';
import { loadConsoleConfig } from './config.js';
import { ConnectionStatsStore } from './connection-stats.js';

/** A real HTTP upstream on loopback that records what reaches it. */
async function upstream() {
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
  const server = http.createServer((request, response) => {
    seen.push({ url: request.url ?? '', headers: request.headers });
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('console backend-for-frontend', () => {
  let gateway: Awaited<ReturnType<typeof upstream>>;
  let app: FastifyInstance;
  const stats = new ConnectionStatsStore();

  beforeAll(async () => {
    gateway = await upstream();
    const config = loadConsoleConfig({
      LOG_LEVEL: 'error',
      CONSOLE_GATEWAY_URL: gateway.url,
      CONSOLE_MANAGEMENT_URL: 'http://127.0.0.1:9', // nothing listens there
      CONSOLE_RECORDINGS_URL: gateway.url,
    });
    app = await buildConsole(config, process.cwd(), stats);
  });

  afterAll(async () => {
    await app.close();
    await gateway.close();
  });

  it('forwards /api/a to interface A with the credential only, never cookies or the browser origin', async () => {
    const answer = await app.inject({
      method: 'GET',
      url: '/api/a/applications?x=1',
      headers: { 'x-api-key': 'sb_key', cookie: 'session=secret', origin: 'https://elsewhere.example' },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-security-policy']).toContain("script-src 'self'");
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    const last = gateway.seen.at(-1)!;
    expect(last.url).toBe('/admin/api/v1.0/applications?x=1');
    expect(last.headers['x-api-key']).toBe('sb_key');
    expect(last.headers.cookie).toBeUndefined();
    expect(last.headers.origin).toBeUndefined();
  });

  it('does not let a path climb out of the API prefix', async () => {
    const before = gateway.seen.length;
    const answer = await app.inject({ method: 'GET', url: '/api/a/%2e%2e/%2e%2e/metrics' });
    expect(answer.statusCode).not.toBe(200);
    expect(gateway.seen.slice(before).map((request) => request.url)).not.toContain('/metrics');
  });

  it('answers a Problem 503 when the API cannot be reached, without internals', async () => {
    const answer = await app.inject({ method: 'GET', url: '/api/b/ApiKeys', headers: { 'x-api-key': 'sb_key' } });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['content-type']).toContain('application/problem+json');
    expect(answer.json()).toEqual(
      expect.objectContaining({ status: 503, detail: expect.stringContaining('interface B') }),
    );
    expect(answer.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|at .*\.js/);
  });

  it("answers a connection's stats once interface A let the caller read the connection", async () => {
    stats.record({
      applicationId: 'app',
      event: {
        channel: { id: 'ch 1' },
        client: { id: 'c', userId: 'u', deviceId: 'd' },
        connection: { id: 'cn', stats: { timestamp: Date.now(), roundTripTime: 42 } },
      },
    });
    const answer = await app.inject({
      method: 'GET',
      url: '/api/stats/app/ch%201/u/d/c/cn',
      headers: { 'x-api-key': 'sb_key', cookie: 'session=secret' },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ samples: [expect.objectContaining({ roundTripTime: 42 })] });
    const asked = gateway.seen.at(-1)!;
    expect(asked.url).toBe(
      '/admin/api/v1.0/applications/app/channels/ch%201/users/u/devices/d/clients/c/connections/cn',
    );
    expect(asked.headers['x-api-key']).toBe('sb_key');
    expect(asked.headers.cookie).toBeUndefined();
  });

  it('serves recording files from recording-service with the byte range only, never the credential', async () => {
    const answer = await app.inject({
      method: 'GET',
      url: '/recordings/files/signed-token',
      headers: { range: 'bytes=0-99', 'x-api-key': 'sb_key', cookie: 'session=secret' },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-security-policy']).toContain("media-src 'self'");
    const asked = gateway.seen.at(-1)!;
    expect(asked.url).toBe('/files/signed-token');
    expect(asked.headers.range).toBe('bytes=0-99');
    expect(asked.headers['x-api-key']).toBeUndefined();
    expect(asked.headers.cookie).toBeUndefined();
  });

  it('refuses a console setting that is not a URL, naming it', () => {
    expect(() => loadConsoleConfig({ CONSOLE_GATEWAY_URL: 'gateway' })).toThrow(/CONSOLE_GATEWAY_URL/);
  });
});
