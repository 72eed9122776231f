/**
 * Identical interface A reads that reach the gateway together (one event-loop turn) share one
 * request to runtime-registry (ADMIN_SHARE_READS, on by default); different credentials or
 * queries never share; each HTTP request still gets its own complete answer, or its own problem
 * body (own correlation id). The requests of a test are pipelined on one socket, so the gateway
 * reads them in one turn.
 */
import { connect, type Socket } from 'node:net';
import { testNamespace, testServers } from '@switchboard/testing';
import {
  startFakeRuntime,
  OPERATOR_KEY,
  OPERATOR_SCOPE,
  TENANT_KEY,
  TENANT_SCOPE,
  WireFailure,
  type FakeRuntime,
} from '../testing/fake-runtime.testing.js';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';

interface Answer {
  status: number;
  body: any;
  correlationId: string | undefined;
}

/**
 * Writes every request at once on one keep-alive socket (HTTP/1.1 pipelining: the gateway reads
 * them in one turn); resolves with the answers in order.
 */
async function together(url: string, requests: Array<{ path: string; key: string }>): Promise<Answer[]> {
  const { port } = new URL(url);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(
      requests
        .map(
          (r, i) =>
            `GET ${r.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${r.key}\r\n${i === requests.length - 1 ? 'Connection: close\r\n' : ''}\r\n`,
        )
        .join(''),
    );
  });
  const answers: Answer[] = [];
  for (let rest = text; rest.length > 0;) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end);
    const length = Number(/^content-length: (\d+)$/im.exec(head)?.[1] ?? 0);
    const body = rest.slice(end + 4, end + 4 + length);
    answers.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
      body: body ? JSON.parse(body) : undefined,
      correlationId: /^x-correlation-id: (.+)$/im.exec(head)?.[1]?.trim(),
    });
    rest = rest.slice(end + 4 + length);
  }
  expect(answers).toHaveLength(requests.length);
  return answers;
}

describe('interface A reads shared within one turn', () => {
  const servers = testServers();
  const ns = testNamespace('gw_shared');
  let fake: FakeRuntime;
  let sharing: TestGateway;
  let notSharing: TestGateway;
  let answered = 0;

  const path = (applicationId: string) => `/admin/api/v1.0/applications/${applicationId}`;
  const many = (n: number, p: string, key = OPERATOR_KEY) => Array.from({ length: n }, () => ({ path: p, key }));

  beforeAll(async () => {
    fake = await startFakeRuntime(servers.natsUrl, ns);
    sharing = await startTestGateway(servers.natsUrl, ns);
    notSharing = await startTestGateway(servers.natsUrl, ns, { ADMIN_SHARE_READS: 'false' });
    // Credentials verified once, so that every request of a test reaches the runtime client in the turn it was read.
    for (const g of [sharing, notSharing])
      for (const key of [OPERATOR_KEY, TENANT_KEY]) await together(g.url, [{ path: path('warm-up'), key }]);
  });

  afterAll(async () => {
    await sharing?.close();
    await notSharing?.close();
    await fake?.close();
  });

  beforeEach(() => {
    fake.queries.length = 0;
    fake.onQuery = ({ query }) => ({ id: (query as { applicationId: string }).applicationId, answer: ++answered });
  });

  it('answers identical reads arriving together with one registry read, every request in full', async () => {
    const answers = await together(sharing.url, many(8, path('app-1')));
    expect(fake.queries).toEqual([
      { scope: OPERATOR_SCOPE, query: { kind: 'application.get', applicationId: 'app-1' } },
    ]);
    const body = answers[0]!.body;
    expect(body).toEqual({ id: 'app-1', answer: expect.any(Number) });
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toEqual(body);
    }
    expect(new Set(answers.map((a) => a.correlationId)).size).toBe(8);
  });

  it('never shares between different credentials or different queries', async () => {
    const answers = await together(sharing.url, [
      ...many(3, path('app-1')),
      ...many(3, path('app-1'), TENANT_KEY),
      ...many(3, path('app-2')),
    ]);
    expect(fake.queries).toHaveLength(3);
    expect(fake.queries).toEqual(
      expect.arrayContaining([
        { scope: OPERATOR_SCOPE, query: { kind: 'application.get', applicationId: 'app-1' } },
        { scope: TENANT_SCOPE, query: { kind: 'application.get', applicationId: 'app-1' } },
        { scope: OPERATOR_SCOPE, query: { kind: 'application.get', applicationId: 'app-2' } },
      ]),
    );
    const numbers = answers.map((a) => a.body.answer as number);
    expect(new Set(numbers.slice(0, 3)).size).toBe(1);
    expect(new Set(numbers).size).toBe(3);
    expect(answers.slice(6).every((a) => a.body.id === 'app-2')).toBe(true);
  });

  it('gives every request of a shared read that failed its own problem body', async () => {
    fake.onQuery = () => {
      throw new WireFailure('NotFound', 'application app-9 not found');
    };
    const answers = await together(sharing.url, many(5, path('app-9')));
    expect(fake.queries).toHaveLength(1);
    for (const a of answers) {
      expect(a.status).toBe(404);
      expect(a.body).toEqual(
        expect.objectContaining({
          status: 404,
          code: 'NotFound',
          instance: path('app-9'),
          correlationId: a.correlationId,
        }),
      );
    }
    expect(new Set(answers.map((a) => a.correlationId)).size).toBe(5);
  });

  it('sends one registry read per request with ADMIN_SHARE_READS=false', async () => {
    const answers = await together(notSharing.url, many(8, path('app-1')));
    expect(fake.queries).toHaveLength(8);
    expect(new Set(answers.map((a) => a.body.answer as number)).size).toBe(8);
  });
});
