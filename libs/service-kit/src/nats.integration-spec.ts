/**
 * NatsClient and NamespacedNatsServer on the jest run's real NATS: request/reply in Nest's packet
 * format, the caller's correlation id inside handlers, typed errors, Unavailable and Timeout,
 * handled-request metrics, events, and many concurrent requests (writes are coalesced per event
 * loop turn). Answers as JSON text (`requestJson`), and answers larger than the server's
 * max_payload (split into parts) on a NATS server of the test's own with a small max_payload.
 */
import { Controller, type INestApplication } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { NoRespondersError, TimeoutError } from '@nats-io/transport-node';
import { DomainError } from '@switchboard/contracts';
import { startNatsServer, testNamespace, testServers, waitFor, type OwnNatsServer } from '@switchboard/testing';
import { currentCorrelationId, runWithCorrelation } from './correlation.js';
import { renderPlainError } from './errors.js';
import { JsonLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { NatsClient } from './nats.js';
import { singleHeader } from './nats-wire.js';
import { createService } from './service.js';

const events: Array<{ value: unknown; correlationId: string | undefined }> = [];
let countCalls = 0;

@Controller()
class TestRpc {
  @MessagePattern('kit-test.v1.echo')
  async echo(@Payload() body: { value: unknown; delayMs?: number }) {
    if (body.delayMs) await new Promise((r) => setTimeout(r, body.delayMs));
    return { value: body.value, correlationId: currentCorrelationId() };
  }

  @MessagePattern('kit-test.v1.refuse')
  refuse(): never {
    throw new DomainError('Conflict', 'refused on purpose', [{ field: 'x', message: 'taken' }]);
  }

  @MessagePattern('kit-test.v1.crash')
  crash(): never {
    throw new Error('a secret detail');
  }

  @MessagePattern('kit-test.v1.count')
  count(@Payload() body: { value: unknown }) {
    return { value: body.value, call: ++countCalls };
  }

  @MessagePattern('kit-test.v1.list')
  list(@Payload() body: { count: number }) {
    return Array.from({ length: body.count }, (_, i) => ({ index: i, name: `item-${i}`, text: 'é✓ '.repeat(8) }));
  }

  @EventPattern('kit-test.v1.event')
  event(@Payload() body: { value: unknown }) {
    events.push({ value: body.value, correlationId: currentCorrelationId() });
  }
}

/** The test subjects are not in the contracts' request map. */
type Untyped = (subject: string, payload: unknown, opts?: { timeoutMs?: number }) => Promise<unknown>;
type UntypedJson = (
  subject: string,
  payload: unknown,
  opts?: { timeoutMs?: number; shareWithinTurn?: boolean },
) => Promise<Buffer>;

async function startKitService(natsUrl: string, namespace: string): Promise<INestApplication> {
  const config = {
    httpHost: '127.0.0.1',
    httpPort: 0,
    logLevel: 'error' as const,
    natsUrl,
    natsNamespace: namespace,
    natsRequestTimeoutMs: 3000,
    shutdownTimeoutMs: 1000,
  };
  const app = await createService({
    name: 'kit-test',
    config,
    imports: [{ module: class TestModule {}, controllers: [TestRpc] }],
    rpcServer: true,
    renderHttpError: renderPlainError,
    logger: new JsonLogger('kit-test', 'error', () => undefined),
  });
  await app.startAllMicroservices();
  await app.init();
  return app;
}

describe('NatsClient and NamespacedNatsServer', () => {
  const servers = testServers();
  const ns = testNamespace('kit');
  let app: INestApplication;
  let request: Untyped;
  let client: NatsClient;

  beforeAll(async () => {
    app = await startKitService(servers.natsUrl, ns);
    client = app.get(NatsClient);
    request = client.request.bind(client) as unknown as Untyped;
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers in the caller correlation id, and makes one when there is none', async () => {
    const answer = (await runWithCorrelation('corr-kit-1', () => request('kit-test.v1.echo', { value: 42 }))) as {
      value: number;
      correlationId: string;
    };
    expect(answer).toEqual({ value: 42, correlationId: 'corr-kit-1' });
    const other = (await request('kit-test.v1.echo', { value: 'x' })) as { correlationId: string };
    expect(other.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves its subjects the moment startAllMicroservices() resolves (subscriptions flushed first)', async () => {
    for (let i = 0; i < 5; i++) {
      const fresh = await startKitService(servers.natsUrl, testNamespace('kit_ready'));
      try {
        const answer = (await (fresh.get(NatsClient).request as unknown as Untyped)('kit-test.v1.echo', {
          value: i,
        })) as { value: number };
        expect(answer.value).toBe(i);
      } finally {
        await fresh.close();
      }
    }
  });

  it('carries domain errors with their code and details; hides unexpected ones', async () => {
    await expect(request('kit-test.v1.refuse', {})).rejects.toEqual(
      expect.objectContaining({
        code: 'Conflict',
        message: 'refused on purpose',
        details: [{ field: 'x', message: 'taken' }],
      }),
    );
    const crash = request('kit-test.v1.crash', {});
    await expect(crash).rejects.toEqual(expect.objectContaining({ code: 'Internal' }));
    await expect(crash).rejects.not.toEqual(expect.objectContaining({ message: expect.stringContaining('secret') }));
  });

  it('answers Unavailable when nobody serves the subject, Timeout when the answer is late', async () => {
    await expect(request('kit-test.v1.nobody', {})).rejects.toEqual(expect.objectContaining({ code: 'Unavailable' }));
    const started = Date.now();
    await expect(request('kit-test.v1.echo', { value: 1, delayMs: 1000 }, { timeoutMs: 150 })).rejects.toEqual(
      expect.objectContaining({ code: 'Timeout' }),
    );
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('answers many concurrent requests, each its own', async () => {
    const values = Array.from({ length: 500 }, (_, i) => i);
    const answers = (await Promise.all(
      values.map((value) => runWithCorrelation(`corr-many-${value}`, () => request('kit-test.v1.echo', { value }))),
    )) as Array<{ value: number; correlationId: string }>;
    expect(answers).toEqual(values.map((value) => ({ value, correlationId: `corr-many-${value}` })));
  });

  it('handles events in the sender correlation id', async () => {
    const nc = await client.connection$();
    const { headers } = await import('@nats-io/transport-node');
    const h = headers();
    h.set('x-correlation-id', 'corr-event');
    nc.publish(
      client.subject('kit-test.v1.event'),
      JSON.stringify({ pattern: 'kit-test.v1.event', data: { value: 'e1' } }),
      { headers: h },
    );
    await waitFor(() => events.length === 1);
    expect(events).toEqual([{ value: 'e1', correlationId: 'corr-event' }]);
  });

  it('sends raw requests in a batch: every answer to its request, in order, with their headers; failures per request', async () => {
    const nc = await client.connection$();
    const subject = `${ns}.raw-many`;
    const seen: string[] = [];
    const sub = nc.subscribe(subject, {
      callback: (_err, msg) => {
        const id = msg.headers?.get('Sb-Test-Id') ?? '';
        seen.push(id);
        // Answer out of order: the late ones first, the first one last (and one never).
        const text = new TextDecoder().decode(msg.data);
        if (text === 'silent') return;
        setTimeout(() => msg.respond(`${text}:${id}`), text === 'a' ? 60 : 5);
      },
    });
    await nc.flush();
    const outcomes = await client.requestRawMany(
      nc,
      [
        { subject, data: 'a', headers: singleHeader('Sb-Test-Id', 'id-1') },
        { subject, data: new TextEncoder().encode('b'), headers: singleHeader('Sb-Test-Id', 'id-2') },
        { subject: `${ns}.raw-many-nobody`, data: 'c' },
        { subject, data: 'd', headers: singleHeader('Sb-Test-Id', 'non-ascii-é') },
        { subject, data: 'silent', headers: singleHeader('Sb-Test-Id', 'id-5') },
      ],
      { timeoutMs: 400 },
    );
    sub.unsubscribe();
    const kind = (e: unknown) =>
      e instanceof NoRespondersError ? 'no-responders' : e instanceof TimeoutError ? 'timeout' : String(e);
    const text = (o: PromiseSettledResult<{ data: Uint8Array }>) =>
      o.status === 'fulfilled' ? new TextDecoder().decode(o.value.data) : `rejected:${kind(o.reason)}`;
    expect(outcomes.map(text)).toEqual([
      'a:id-1',
      'b:id-2',
      'rejected:no-responders',
      'd:non-ascii-é',
      'rejected:timeout',
    ]);
    // Published in the order given.
    expect(seen).toEqual(['id-1', 'id-2', 'non-ascii-é', 'id-5']);
    expect(await client.requestRawMany(nc, [], { timeoutMs: 100 })).toEqual([]);
  });

  it('counts handled requests by subject and outcome', async () => {
    const text = await app.get(Metrics).registry.getSingleMetricAsString('nats_requests_handled_total');
    const count = (name: string, outcome: string) =>
      Number(
        new RegExp(`subject="${ns}\\.kit-test\\.v1\\.${name}",outcome="${outcome}"[^}]*\\} (\\d+)`).exec(text)?.[1] ??
          0,
      );
    expect(count('echo', 'ok')).toBeGreaterThanOrEqual(502);
    expect(count('refuse', 'Conflict')).toBe(1);
    expect(count('crash', 'Internal')).toBe(1);
    expect(count('event', 'ok')).toBe(1);
  });

  describe('reads shared within one event-loop turn', () => {
    let requestJson: UntypedJson;
    const shared = async () =>
      (await app.get(Metrics).natsRequestsShared.get()).values.find((v) => v.labels.subject === 'kit-test.v1.count')
        ?.value ?? 0;
    const nextTurn = () => new Promise((r) => setImmediate(r));

    beforeAll(async () => {
      requestJson = client.requestJson.bind(client) as unknown as UntypedJson;
      await client.connection$();
    });

    it('answers identical reads of one turn with one request, and nothing else is shared', async () => {
      const before = countCalls;
      const sharedBefore = await shared();
      const same = Array.from({ length: 5 }, () =>
        requestJson('kit-test.v1.count', { value: 'a' }, { shareWithinTurn: true }),
      );
      const other = requestJson('kit-test.v1.count', { value: 'b' }, { shareWithinTurn: true });
      const unshared = requestJson('kit-test.v1.count', { value: 'a' });
      const answers = await Promise.all(same);
      expect(countCalls - before).toBe(3);
      answers.forEach((a) => expect(a).toBe(answers[0]));
      expect(JSON.parse(answers[0]!.toString('utf8'))).toEqual({ value: 'a', call: expect.any(Number) });
      const calls = [answers[0]!, await other, await unshared].map(
        (a) => (JSON.parse(a.toString('utf8')) as { call: number }).call,
      );
      expect(new Set(calls).size).toBe(3);
      expect((await shared()) - sharedBefore).toBe(4);
    });

    it('sends its own request for a read made after the shared one was written', async () => {
      const before = countCalls;
      const first = requestJson('kit-test.v1.count', { value: 'later' }, { shareWithinTurn: true });
      await nextTurn();
      const second = requestJson('kit-test.v1.count', { value: 'later' }, { shareWithinTurn: true });
      const [a, b] = await Promise.all([first, second]);
      expect(a).not.toBe(b);
      expect(countCalls - before).toBe(2);
    });

    it('shares nothing with a read its client had to write at once (a full write buffer)', async () => {
      const before = countCalls;
      const big = { value: 'x'.repeat(256 * 1024) };
      const answers = await Promise.all([
        requestJson('kit-test.v1.count', big, { shareWithinTurn: true }),
        requestJson('kit-test.v1.count', big, { shareWithinTurn: true }),
      ]);
      expect(countCalls - before).toBe(2);
      expect(answers[0]).not.toBe(answers[1]);
    });

    it('shares nothing with a read written by a flush() of the same turn', async () => {
      const nc = await client.connection$();
      const before = countCalls;
      const first = requestJson('kit-test.v1.count', { value: 'flushed' }, { shareWithinTurn: true });
      const flushed = nc.flush();
      const second = requestJson('kit-test.v1.count', { value: 'flushed' }, { shareWithinTurn: true });
      const [a, b] = await Promise.all([first, second, flushed]);
      expect(a).not.toBe(b);
      expect(countCalls - before).toBe(2);
    });

    it('gives every caller of a shared read its error', async () => {
      const refused = Array.from({ length: 3 }, () => requestJson('kit-test.v1.refuse', {}, { shareWithinTurn: true }));
      for (const r of refused)
        await expect(r).rejects.toEqual(expect.objectContaining({ code: 'Conflict', message: 'refused on purpose' }));
    });
  });
});

describe('answers as JSON text, and answers larger than max_payload', () => {
  const MAX_PAYLOAD = 4096;
  let nats: OwnNatsServer;
  let app: INestApplication;
  let request: Untyped;
  let requestJson: UntypedJson;

  beforeAll(async () => {
    nats = await startNatsServer({ maxPayload: MAX_PAYLOAD });
    app = await startKitService(nats.url, testNamespace('kit_big'));
    const client = app.get(NatsClient);
    request = client.request.bind(client) as unknown as Untyped;
    requestJson = client.requestJson.bind(client) as unknown as UntypedJson;
  });

  afterAll(async () => {
    await app?.close();
    await nats?.stop();
  });

  const expected = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ index: i, name: `item-${i}`, text: 'é✓ '.repeat(8) }));

  it('gives the JSON text of an answer exactly as the handler serialized it', async () => {
    const text = await requestJson('kit-test.v1.list', { count: 3 });
    expect(text.toString('utf8')).toBe(JSON.stringify(expected(3)));
    expect((await requestJson('kit-test.v1.echo', { value: 'x' })).toString('utf8')).toMatch(
      /^\{"value":"x","correlationId":"[^"]+"\}$/,
    );
  });

  it('carries errors as DomainErrors over requestJson too', async () => {
    await expect(requestJson('kit-test.v1.refuse', {})).rejects.toEqual(
      expect.objectContaining({ code: 'Conflict', message: 'refused on purpose' }),
    );
    await expect(requestJson('kit-test.v1.nobody', {})).rejects.toEqual(
      expect.objectContaining({ code: 'Unavailable' }),
    );
  });

  it('answers a list many times larger than max_payload, parsed or as text', async () => {
    const count = 2000;
    const list = expected(count);
    expect(Buffer.byteLength(JSON.stringify(list))).toBeGreaterThan(20 * MAX_PAYLOAD);
    expect(await request('kit-test.v1.list', { count })).toEqual(list);
    const text = await requestJson('kit-test.v1.list', { count });
    expect(text.toString('utf8')).toBe(JSON.stringify(list));
  });

  it('keeps concurrent split answers apart', async () => {
    const counts = [700, 1500, 900, 1200];
    const answers = await Promise.all(counts.map((count) => requestJson('kit-test.v1.list', { count })));
    expect(answers.map((a) => (JSON.parse(a.toString('utf8')) as unknown[]).length)).toEqual(counts);
    answers.forEach((a, i) => expect(a.toString('utf8')).toBe(JSON.stringify(expected(counts[i]!))));
  });
});
