import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildDemoRoom } from './app.js';
import { loadDemoRoomConfig } from './config.js';

interface Seen {
  method: string;
  url: string;
  apiKey: string | undefined;
  body: unknown;
}

/** A fake interface B on loopback: the application config lookup, its creation, and the Token action. */
async function fakeInterfaceB(options: { configs: string[]; tokenStatus?: number }) {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      const url = request.url ?? '';
      const apiKey = request.headers['x-api-key'] as string | undefined;
      seen.push({ method: request.method ?? '', url, apiKey, body: raw ? JSON.parse(raw) : undefined });
      const json = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.method === 'GET' && url.startsWith('/ApplicationConfigs?'))
        return json(200, { value: options.configs.map((id) => ({ id })) });
      if (request.method === 'POST' && url === '/ApplicationConfigs') {
        options.configs.push('created-config');
        return json(201, { id: 'created-config' });
      }
      if (request.method === 'POST' && url.endsWith('/Token')) {
        if (options.tokenStatus) return json(options.tokenStatus, { error: { code: 'Forbidden', message: 'no' } });
        return json(200, { value: 'header.payload.signature' });
      }
      return json(404, { error: { code: 'NotFound', message: 'no such route' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const PUBLIC_FILES = ['index.html', 'demo-room.js', 'switchboard-client.js', 'demo-room.css'];

describe('demo room backend', () => {
  let publicDir: string;
  let interfaceB: Awaited<ReturnType<typeof fakeInterfaceB>>;
  let app: FastifyInstance;
  const configs: string[] = [];

  const build = (managementUrl: string) =>
    buildDemoRoom(
      loadDemoRoomConfig({
        LOG_LEVEL: 'error',
        DEMO_MANAGEMENT_URL: managementUrl,
        DEMO_API_KEY: 'sb_backend_key',
        DEMO_APPLICATION_ID: 'demo-app',
        DEMO_SYNC_URL: 'wss://switchboard.example/sync',
        DEMO_UPSTREAM_TIMEOUT_MS: '2000',
      }),
      { publicDir },
    );
  const ask = (target: FastifyInstance, body: unknown) =>
    target.inject({ method: 'POST', url: '/api/token', payload: body as object });

  beforeAll(async () => {
    publicDir = mkdtempSync(path.join(os.tmpdir(), 'demo-room-'));
    for (const file of PUBLIC_FILES) writeFileSync(path.join(publicDir, file), `/* ${file} */`);
    interfaceB = await fakeInterfaceB({ configs });
    app = await build(interfaceB.url);
  });

  afterAll(async () => {
    await app.close();
    await interfaceB.close();
    rmSync(publicDir, { recursive: true, force: true });
  });

  it('serves the page and its scripts from one origin with a strict CSP that allows only the /sync socket', async () => {
    for (const [url, type] of [
      ['/', 'text/html'],
      ['/demo-room.js', 'text/javascript'],
      ['/switchboard-client.js', 'text/javascript'],
      ['/demo-room.css', 'text/css'],
    ] as const) {
      const answer = await app.inject({ method: 'GET', url });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toContain(type);
      const policy = answer.headers['content-security-policy'] as string;
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("script-src 'self';");
      expect(policy).toContain("connect-src 'self' wss://switchboard.example/sync;");
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await app.inject({ method: 'GET', url: '/../package.json' })).statusCode).toBe(404);
  });

  it('creates the application config when missing, then asks the Token action for the room with its key', async () => {
    const answer = await ask(app, { name: '  Zoë 👩🏽‍💻 ', room: 'standup-1' });
    expect(answer.statusCode).toBe(200);
    const issued = answer.json<Record<string, string>>();
    expect(issued).toMatchObject({
      token: 'header.payload.signature',
      name: 'Zoë 👩🏽‍💻',
      room: 'standup-1',
      applicationId: 'demo-app',
      syncUrl: 'wss://switchboard.example/sync',
    });
    expect(issued.clientId).toMatch(/^c-[0-9a-f-]{36}$/);
    const suffix = issued.clientId!.slice(2);
    expect(interfaceB.seen.map((call) => `${call.method} ${call.url.split('?')[0]}`)).toEqual([
      'GET /ApplicationConfigs',
      'POST /ApplicationConfigs',
      'POST /ApplicationConfigs/created-config/Token',
    ]);
    expect(decodeURIComponent(interfaceB.seen[0]!.url)).toContain("$filter=applicationId eq 'demo-app'");
    expect(interfaceB.seen.every((call) => call.apiKey === 'sb_backend_key')).toBe(true);
    expect(interfaceB.seen[1]!.body).toEqual({ applicationId: 'demo-app', tag: 'demo-room' });
    expect(interfaceB.seen[2]!.body).toEqual({
      userId: `u-${suffix}`,
      deviceId: `d-${suffix}`,
      clientId: issued.clientId,
      channelClaims: [{ id: 'standup-1' }],
    });

    // A refresh names the client id it was given: the same ids, the config found (no lookup again).
    const refreshed = await ask(app, { name: 'Zoë', room: 'standup-1', clientId: issued.clientId });
    expect(refreshed.json()).toMatchObject({ clientId: issued.clientId, userId: `u-${suffix}` });
    expect(interfaceB.seen).toHaveLength(4);
  });

  it.each([
    [{ room: 'r' }, 'name', 'name must be a string'],
    [{ name: '   ', room: 'r' }, 'name', 'name must not be empty'],
    [{ name: 'x'.repeat(41), room: 'r' }, 'name', 'name must be at most 40 characters'],
    [{ name: 'a\u0000b', room: 'r' }, 'name', 'name must not contain U+0000'],
    [{ name: 'a\ud800b', room: 'r' }, 'name', 'name must be well-formed Unicode (no lone surrogate)'],
    [{ name: 'a\u0007b', room: 'r' }, 'name', 'name must not contain control characters'],
    [{ name: 'Ann', room: '' }, 'room', 'room must not be empty'],
    [{ name: 'Ann', room: 'r'.repeat(65) }, 'room', 'room must be at most 64 characters'],
    [{ name: 'Ann', room: 'a/b' }, 'room', 'room may hold only letters, digits, ".", "_" and "-"'],
    [{ name: 'Ann', room: 'r\u0000' }, 'room', 'room must not contain U+0000'],
    [{ name: 'Ann', room: 'r', clientId: 'someone-else' }, 'clientId', 'clientId must be one this backend gave out'],
  ])('refuses %j with a 400 naming %s', async (body, field, message) => {
    const before = interfaceB.seen.length;
    const answer = await ask(app, body);
    expect(answer.statusCode).toBe(400);
    expect(answer.headers['content-type']).toContain('application/problem+json');
    const problem = answer.json<{ detail: string; errors: Array<{ field: string; message: string }> }>();
    expect(problem.errors).toEqual([{ field, message: expect.stringContaining(message) as string }]);
    expect(problem.detail).toContain(message);
    expect(interfaceB.seen).toHaveLength(before);
  });

  it('refuses a body that is not a JSON object', async () => {
    for (const payload of ['[1]', '"text"', '{not json']) {
      const answer = await app.inject({
        method: 'POST',
        url: '/api/token',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(answer.statusCode).toBe(400);
      expect(answer.headers['content-type']).toContain('application/problem+json');
    }
  });

  it('answers 502 when interface B refuses, 503 when it cannot be reached, without its internals', async () => {
    const refusing = await fakeInterfaceB({ configs: ['config-1'], tokenStatus: 403 });
    const refusingApp = await build(refusing.url);
    const refused = await ask(refusingApp, { name: 'Ann', room: 'r' });
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toMatchObject({
      status: 502,
      detail: 'interface B refused the token request: HTTP 403 Forbidden',
    });
    await refusingApp.close();
    await refusing.close();

    const unreachable = await build('http://127.0.0.1:9');
    const answer = await ask(unreachable, { name: 'Ann', room: 'r' });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ detail: 'interface B (management-api) cannot be reached' });
    await unreachable.close();
  });
});
