/**
 * Text that PostgreSQL and UTF-8 cannot carry (U+0000, a lone surrogate) sent straight over NATS,
 * bypassing the gateway: the registry refuses it with a typed ValidationFailed naming the field,
 * and nothing reaches the live model, a gateway or the event stream.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { RuntimeSubjects } from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers } from '@switchboard/testing';
import {
  claim,
  EventReader,
  FakeGateway,
  natsConnection,
  RegistryClient,
  registerReport,
  registryEnv,
  scopeOf,
  startRegistry,
  type TestClient,
} from './testing/harness.testing.js';

const ORG = 'org-hostile';
const TENANT = scopeOf(ORG);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface WireRefusal {
  code: string;
  details?: Array<{ field?: string; message: string }>;
}

describe('runtime-registry refuses unstorable text over NATS', () => {
  const ns = testNamespace('hostile');
  const a = 'app-hostile';
  const client: TestClient = { applicationId: a, userId: 'u1', deviceId: 'd1', clientId: 'c1' };
  let registry: { app: INestApplication };
  let nc: NatsConnection;
  let rt: RegistryClient;
  let gateway: FakeGateway;
  let events: EventReader;

  /** The error of a request, with its details (WireError of the harness keeps the code only). */
  async function refusal(subject: string, data: unknown): Promise<WireRefusal> {
    const msg = await nc.request(
      `${ns}.${subject}`,
      encoder.encode(JSON.stringify({ pattern: subject, data, id: randomUUID() })),
      { timeout: 10000 },
    );
    const reply = JSON.parse(decoder.decode(msg.data)) as { err?: WireRefusal | null };
    if (!reply.err) throw new Error(`${subject} was accepted`);
    return reply.err;
  }

  const eventCount = async () => (await events.all()).length;

  beforeAll(async () => {
    registry = await startRegistry(registryEnv(ns));
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    gateway = await new FakeGateway('gw-1', nc, ns).start();
    events = await EventReader.open(nc, ns);
    await rt.edge(registerReport(client, ORG, 'gw-1'));
    await rt.edge({ kind: 'client.join', client, channelId: 'ch1', claim: claim('ch1') });
    await rt.edge({
      kind: 'connection.open',
      client,
      channelId: 'ch1',
      connectionId: 'cn1',
      type: 'peer',
      tag: null,
      streams: { audio: { direction: 'sendrecv' } },
    });
  });

  afterAll(async () => {
    gateway?.stop();
    await events?.manager.streams.delete(events.stream).catch(() => undefined);
    await nc?.close();
    await registry?.app.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it.each([
    ['a NUL in a message', 'x\u0000y'],
    ['a lone high surrogate in a message', '\ud800'],
    ['a lone low surrogate in a message', 'end\udc00'],
  ])('%s', async (_case, text) => {
    const before = await eventCount();
    gateway.clear();
    const err = await refusal(RuntimeSubjects.command, {
      scope: TENANT,
      command: {
        kind: 'message',
        origin: 'api',
        target: { level: 'application', applicationId: a },
        message: { message: text },
      },
    });
    expect(err).toMatchObject({ code: 'ValidationFailed', details: [{ field: 'command.message.message' }] });
    expect(gateway.received).toEqual([]);
    expect(await eventCount()).toBe(before);
  });

  it('refuses a NUL in a recording tag and a lone surrogate in a client alias, keeping the old values', async () => {
    const before = await eventCount();
    const tag = await refusal(RuntimeSubjects.command, {
      scope: TENANT,
      command: {
        kind: 'update',
        origin: 'api',
        target: {
          level: 'connection',
          ...client,
          channelId: 'ch1',
          connectionId: 'cn1',
          patch: { recording: true, recordingTag: 'a\u0000b' },
        },
      },
    });
    expect(tag).toMatchObject({ code: 'ValidationFailed', details: [{ field: 'command.target.patch.recordingTag' }] });
    const alias = await refusal(RuntimeSubjects.edge, {
      report: registerReport({ ...client, clientId: 'c2' }, ORG, 'gw-1', { userAlias: 'bad\ud800' }),
    });
    expect(alias).toMatchObject({ code: 'ValidationFailed', details: [{ field: 'report.client.userAlias' }] });
    expect(await eventCount()).toBe(before);
    expect((await rt.query(TENANT, 'application.get', { applicationId: a })).clientCount).toBe(1);
    expect((await rt.query(TENANT, 'user.get', { applicationId: a, userId: 'u1' })).alias).toBe('alias-u1');
  });

  it('still accepts astral characters (emoji) in the same fields', async () => {
    await rt.command(TENANT, {
      kind: 'message',
      origin: 'api',
      target: { level: 'application', applicationId: a },
      message: { message: 'hi \u{1F44B}' },
    });
    expect(gateway.received.some((r) => JSON.stringify(r.push).includes('hi \u{1F44B}'))).toBe(true);
  });
});
