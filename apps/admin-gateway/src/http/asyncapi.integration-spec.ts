/**
 * The AsyncAPI document of `/sync` the gateway serves next to its OpenAPI document: same access rules,
 * valid for @asyncapi/parser, naming every request and push type of the contract; and the frames of
 * a real session (the real runtime-registry, no media server) are what the document says: each
 * result and push matches its schema, each refusal carries a code the document lists for its request.
 */
import { DiagnosticSeverity, Parser, type AsyncAPIDocumentInterface } from '@asyncapi/parser';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  EdgeValidators,
  RuntimeSubjects,
  Subjects,
  SYNC_PUSH_TYPES,
  SYNC_REQUEST_TYPES,
  SYNC_RESULT_DATA,
  validator,
  type ChannelClaim,
  type ResolvedApplication,
  type SyncRequestType,
} from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor, type SpawnedService } from '@switchboard/testing';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { registerToken, spawnTestRegistry } from '../testing/registry.testing.js';
import { identity, TestSyncClient, type Answer, type Identity } from '../testing/sync-client.testing.js';

const APP = 'app-asyncapi';
const ORG = 'org-asyncapi';
const SECRET = 'asyncapi-secret';
const API_KEY = 'sb_asyncapi-key';
const CLAIMS: ChannelClaim[] = [{ id: 'room-1' }, { id: 'room-quiet', disableSendMessage: true }];
const PATHS = ['/admin/api/v1.0/asyncapi.json', '/admin/api/v1/asyncapi.json'];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Frame = { type: 'result' | 'error' | 'push'; id?: string | number | null; [key: string]: any };

/** A client whose request ids name their type (`join:3`), recording every frame it receives. */
class RecordingClient {
  readonly frames: Frame[] = [];
  private next = 1;
  private constructor(readonly sync: TestSyncClient) {
    sync.ws.on('message', (raw) => {
      const bytes = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
      this.frames.push(JSON.parse(bytes.toString('utf8')) as Frame);
    });
  }
  static async open(url: string) {
    return new RecordingClient(await TestSyncClient.open(url));
  }
  request(type: SyncRequestType, data?: unknown): Promise<Answer> {
    return this.sync.request(type, data, `${type}:${this.next++}`);
  }
  async ok(type: SyncRequestType, data?: unknown): Promise<any> {
    const answer = await this.request(type, data);
    if (answer.type !== 'result') throw new Error(`${type} failed: ${JSON.stringify(answer.error)}`);
    return answer.data;
  }
  async refused(type: SyncRequestType, data?: unknown): Promise<string> {
    const answer = await this.request(type, data);
    if (answer.type !== 'error') throw new Error(`${type} was not refused: ${JSON.stringify(answer.data)}`);
    return answer.error.code;
  }
}

describe('the /sync AsyncAPI document', () => {
  const servers = testServers();
  const ns = testNamespace('gw_asyncapi');
  let nc: NatsConnection;
  let registry: SpawnedService;
  let gateway: TestGateway;
  let outside: TestGateway;
  let served: Record<string, any>;
  let parsed: AsyncAPIDocumentInterface;
  const clients: RecordingClient[] = [];

  /** Answers a management-api request subject (Nest packets) with `answer(data)`. */
  function stub(subject: string, answer: (data: any) => unknown) {
    nc.subscribe(`${ns}.${subject}`, {
      callback: (err, msg) => {
        if (err) return;
        const { id, data } = JSON.parse(decoder.decode(msg.data)) as { id: string; data: unknown };
        msg.respond(encoder.encode(JSON.stringify({ id, response: answer(data), isDisposed: true })));
      },
    });
  }

  async function admin(method: string, path: string, body?: unknown): Promise<number> {
    const res = await fetch(`${gateway.url}/admin/api/v1.0/applications/${APP}${path}`, {
      method,
      headers: { 'x-api-key': API_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  }

  async function registered(id: Identity = identity()) {
    const client = await RecordingClient.open(gateway.syncUrl);
    clients.push(client);
    await client.ok('register', { token: registerToken(id, { applicationId: APP, secret: SECRET, channels: CLAIMS }) });
    return { client, id };
  }

  /** The error codes the served document lists for a request type. */
  function documentedCodes(type: string): string[] {
    const message = parsed.messages().get(`${type}.error`);
    const code = message!.payload()!.properties()!.error!.properties()!.code!;
    return code.anyOf()!.map((c) => c.const() as string);
  }

  beforeAll(async () => {
    nc = await connect({ servers: servers.natsUrl });
    const application: ResolvedApplication = {
      applicationId: APP,
      applicationConfigId: 'cfg-asyncapi',
      organizationId: ORG,
      sharedSecret: SECRET,
      disabled: false,
    };
    stub(RuntimeSubjects.resolveApplication, () => application);
    stub(Subjects.apiKeyVerify, (data: { apiKey: string }) =>
      data.apiKey === API_KEY
        ? { valid: true, keyId: 'asyncapi', organizationId: ORG, operator: false }
        : { valid: false },
    );
    await nc.flush();
    [registry, gateway, outside] = await Promise.all([
      spawnTestRegistry(servers.natsUrl, servers.redisUrl, ns),
      startTestGateway(servers.natsUrl, ns, { SYNC_RECONCILE_INTERVAL_MS: '0' }),
      // The test calls come from 127.0.0.1: outside this allowlist.
      startTestGateway(servers.natsUrl, ns, { ADMIN_CIDR_ALLOWLIST: '10.0.0.0/8' }),
    ]);
    served = (await (await fetch(`${gateway.url}${PATHS[0]}`)).json()) as Record<string, any>;
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(served));
    const serious = diagnostics.filter((d) => d.severity <= DiagnosticSeverity.Warning);
    if (!document || serious.length) throw new Error(`invalid AsyncAPI document: ${JSON.stringify(serious)}`);
    parsed = document;
  }, 90000);

  afterAll(async () => {
    for (const c of clients.splice(0)) c.sync.terminate();
    await Promise.all([gateway?.close(), outside?.close()]);
    await registry?.stop();
    await nc?.close();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
  });

  it('is served like the OpenAPI document: without a credential inside the admin allowlist, 403 outside', async () => {
    for (const path of PATHS) {
      const inside = await fetch(`${gateway.url}${path}`);
      expect(inside.status).toBe(200);
      expect(inside.headers.get('content-type')).toContain('application/json');
      expect(((await inside.json()) as { asyncapi: string }).asyncapi).toBe('3.0.0');
      const refused = await fetch(`${outside.url}${path}`);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(((await refused.json()) as { code: string }).code).toBe('Forbidden');
    }
  });

  it('names the gateway as its server and passes @asyncapi/parser validation', () => {
    expect(parsed.version()).toBe('3.0.0');
    const server = parsed.servers().get('gateway')!;
    expect(server.protocol()).toBe('ws');
    // Where clients reach /sync: the address the gateway listens on (no SYNC_PUBLIC_URL set).
    expect(`${server.url().replace(/\/$/, '')}${parsed.channels().get('sync')!.address()}`).toBe(gateway.syncUrl);
  });

  it('receives every request type of the contract and answers each with a result or its error codes', () => {
    const received = parsed
      .operations()
      .filterByReceive()
      .map((o) => o.id());
    expect(received).toHaveLength(SYNC_REQUEST_TYPES.length);
    expect(new Set(received)).toEqual(new Set(SYNC_REQUEST_TYPES));
    for (const type of SYNC_REQUEST_TYPES) {
      const reply = parsed.operations().get(type)!.reply()!;
      expect(
        reply
          .messages()
          .all()
          .map((m) => m.id()),
      ).toEqual([`${type}.result`, `${type}.error`]);
      expect(documentedCodes(type)).toEqual(expect.arrayContaining(['ValidationFailed', 'Internal']));
    }
  });

  it('sends every push type of the contract (ServerPush), and error frames of unreadable frames', () => {
    const sent = parsed
      .operations()
      .filterBySend()
      .map((o) => o.id());
    expect(new Set(sent)).toEqual(new Set([...SYNC_PUSH_TYPES.map((type) => `push.${type}`), 'frame.error']));
  });

  it('describes the frames of a real session: results and pushes match their schemas, refusals use listed codes', async () => {
    const { client: ann, id: annId } = await registered();
    const { client: bea } = await registered();
    expect(await ann.ok('ping')).toEqual({ time: expect.any(String) });
    await ann.ok('join', { channelId: 'room-1' });
    await bea.ok('join', { channelId: 'room-1' });
    // No media server is registered: an sfu connection cannot be placed.
    const placement = await ann.request('connection.open', { channelId: 'room-1', type: 'sfu', streams: {} });
    expect(placement).toEqual(
      expect.objectContaining({
        error: expect.objectContaining({ code: 'Unavailable', message: expect.stringMatching(/No media server/) }),
      }),
    );
    await ann.ok('connection.open', {
      channelId: 'room-1',
      connectionId: 'cn-ann',
      type: 'peer',
      streams: { audio: { direction: 'sendrecv', formats: ['opus/48000/2'] } },
    });
    for (const state of ['initializing', 'connecting', 'connected'])
      await ann.ok('connection.state', { connectionId: 'cn-ann', state });
    await ann.ok('connection.update', { connectionId: 'cn-ann', localAudioMuted: true });
    await ann.ok('stats', { connectionId: 'cn-ann', stats: { bytesSent: 10 } });
    await ann.ok('stats', { stats: { bytesSent: 10 } });
    await ann.ok('client.update', { userAlias: 'Ann' });

    // A client message reaches the others as an object holding the text; never the sender.
    expect(await ann.ok('message', { channelId: 'room-1', message: 'hello' })).toEqual({ delivered: 1 });
    const pushed = await waitFor(() => bea.sync.pushes.find((p) => p.type === 'message'));
    expect(pushed).toEqual(
      expect.objectContaining({ channelId: 'room-1', message: expect.objectContaining({ message: 'hello' }) }),
    );
    await ann.ok('ping');
    expect(ann.sync.pushes.filter((p) => p.type === 'message')).toEqual([]);

    // Operators: a message, a mute, a kick.
    expect(await admin('POST', '/channels/room-1/message', { message: 'from the operator' })).toBe(204);
    expect(await admin('PATCH', '/channels/room-1', { audioMuted: true })).toBe(204);
    await waitFor(() => ann.sync.pushes.some((p) => p.type === 'settings'));
    await waitFor(() => bea.sync.pushes.filter((p) => p.type === 'message').length === 2);

    await bea.ok('join', { channelId: 'room-quiet' });
    const refusals = [
      await bea.refused('join', { channelId: 'room-1' }),
      await bea.refused('join', { channelId: 'room-unclaimed' }),
      await bea.refused('message', { channelId: 'room-quiet', message: 'x' }),
      await bea.refused('message', { channelId: 'room-2', message: 'x' }),
      await ann.refused('connection.state', { connectionId: 'cn-ann', state: 'new' }),
      await ann.refused('connection.close', { connectionId: 'cn-none' }),
      await ann.refused('connection.offer', { connectionId: 'cn-ann', offer: { type: 'offer', sdp: 'v=0' } }),
      await ann.refused('register', { token: 'x.y.z' }),
    ];
    expect(refusals).toEqual([
      'AlreadyJoined',
      'Forbidden',
      'Forbidden',
      'NotJoined',
      'InvalidTransition',
      'UnknownConnection',
      'ValidationFailed',
      'AlreadyRegistered',
    ]);
    expect(await admin('DELETE', `/channels/room-1/users/${annId.userId}`)).toBe(204);
    await waitFor(() => ann.sync.pushes.some((p) => p.type === 'kicked'));
    expect(await ann.refused('leave', { channelId: 'room-1' })).toBe('NotJoined');
    await bea.ok('leave', { channelId: 'room-1' });
    await ann.ok('unregister');

    const frames = clients.flatMap((c) => c.frames);
    expect(new Set(frames.map((f) => (f.type === 'push' ? `push.${f.push.type}` : f.type)))).toEqual(
      new Set(['result', 'error', 'push.message', 'push.settings', 'push.kicked']),
    );
    for (const frame of frames) {
      if (frame.type === 'push') {
        expect(EdgeValidators.SyncPushFrame.errors(frame)).toEqual([]);
        continue;
      }
      const type = String(frame.id).split(':')[0] as SyncRequestType;
      if (frame.type === 'result')
        expect([type, validator(SYNC_RESULT_DATA[type]).errors(frame.data)]).toEqual([type, []]);
      else expect(documentedCodes(type)).toContain(frame.error.code);
    }
  });
});
