import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSender } from './http-sender.js';
import { TargetGuard } from './ssrf-guard.js';

describe('HttpSender', () => {
  let server: http.Server;
  let port: number;
  const seen: Array<{
    host: string | undefined;
    url: string | undefined;
    body: string;
    headers: http.IncomingHttpHeaders;
  }> = [];
  let behaviour: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end('ok');

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        seen.push({ host: req.headers.host, url: req.url, body, headers: req.headers });
        behaviour(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
    behaviour = (_req, res) => res.end('ok');
  });

  // A name that "resolves" to loopback: the request must reach the checked address with the original Host.
  const guard = new TargetGuard({ allowPrivate: false, allowLoopback: true }, async (host) =>
    host === 'hooks.example.test' ? [{ address: '127.0.0.1', family: 4 }] : [],
  );
  const sender = new HttpSender(guard, { maxSocketsPerOrigin: 4 });
  afterAll(() => sender.close());
  const send = (url: string, timeoutMs = 2000) =>
    sender.send({ url, body: '{"a":1}', headers: { 'content-type': 'application/json', 'x-test': 'yes' }, timeoutMs });

  it('POSTs the body to the checked address and keeps the Host of the URL', async () => {
    const outcome = await send(`http://hooks.example.test:${port}/in?x=1`);
    expect(outcome).toEqual({ kind: 'response', statusCode: 200, durationMs: expect.any(Number) });
    expect(seen).toEqual([
      expect.objectContaining({ host: `hooks.example.test:${port}`, url: '/in?x=1', body: '{"a":1}' }),
    ]);
    expect(seen[0]!.headers['x-test']).toBe('yes');
    expect(seen[0]!.headers['content-length']).toBe('7');
  });

  it('reports the status of any answer, without following redirects', async () => {
    behaviour = (_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/' });
      res.end();
    };
    expect(await send(`http://127.0.0.1:${port}/`)).toEqual(
      expect.objectContaining({ kind: 'response', statusCode: 302 }),
    );
    expect(seen).toHaveLength(1);
  });

  it('a dropped connection is a network error; a slow answer a timeout', async () => {
    behaviour = (req) => req.socket.destroy();
    expect(await send(`http://127.0.0.1:${port}/`)).toEqual(
      expect.objectContaining({ kind: 'network-error', error: 'ECONNRESET: socket hang up' }),
    );
    behaviour = (_req, res) => setTimeout(() => res.end('late'), 500);
    expect(await send(`http://127.0.0.1:${port}/`, 100)).toEqual(expect.objectContaining({ kind: 'timeout' }));
  });

  it("a request still waiting for one of the pool's connections times out as well, and the pool serves the next ones", async () => {
    // 4 connections per origin: the fifth request waits in the pool's queue until its timeout.
    behaviour = (_req, res) => setTimeout(() => res.end('late'), 400);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => send(`http://127.0.0.1:${port}/`, 100)));
    expect(outcomes).toEqual(
      Array.from({ length: 5 }, () => expect.objectContaining({ kind: 'timeout', error: 'timed out after 100 ms' })),
    );
    behaviour = (_req, res) => res.end('ok');
    expect(await send(`http://127.0.0.1:${port}/`)).toEqual(
      expect.objectContaining({ kind: 'response', statusCode: 200 }),
    );
  });

  it('an answer larger than 1 MB is reported with its status without reading it all, and the next request goes through', async () => {
    behaviour = (_req, res) => {
      res.writeHead(503);
      res.end(Buffer.alloc(3 * 1024 * 1024, 'x'));
    };
    expect(await send(`http://127.0.0.1:${port}/`)).toEqual(
      expect.objectContaining({ kind: 'response', statusCode: 503 }),
    );
    behaviour = (_req, res) => res.end('ok');
    expect(await send(`http://127.0.0.1:${port}/`)).toEqual(
      expect.objectContaining({ kind: 'response', statusCode: 200 }),
    );
  });

  it('a closed port is a network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await send(`http://127.0.0.1:${closedPort}/`)).toEqual(
      expect.objectContaining({ kind: 'network-error', error: expect.stringMatching(/ECONNREFUSED/) }),
    );
  });

  it('refuses bad URLs, other schemes and forbidden targets without connecting', async () => {
    expect(await send('not a url')).toEqual(expect.objectContaining({ kind: 'refused', error: 'invalid URL' }));
    expect(await send('ftp://127.0.0.1/')).toEqual(expect.objectContaining({ kind: 'refused' }));
    expect(await send('http://10.0.0.1/')).toEqual(
      expect.objectContaining({ kind: 'refused', error: expect.stringMatching(/private/) }),
    );
    expect(await send('http://[fd00:ec2::254]/')).toEqual(
      expect.objectContaining({ kind: 'refused', error: expect.stringMatching(/metadata/) }),
    );
    expect(await send('http://nowhere.example.test/')).toEqual(
      expect.objectContaining({ kind: 'network-error', error: expect.stringMatching(/cannot resolve/) }),
    );
    expect(seen).toHaveLength(0);
  });

  it('sends credentials of the URL as basic authentication', async () => {
    await send(`http://user:p%40ss@127.0.0.1:${port}/`);
    expect(seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
  });
});
