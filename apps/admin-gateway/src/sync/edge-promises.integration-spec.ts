/**
 * What the /sync edge promises (docs/sync-protocol.md), against the real runtime-registry (its own
 * process, on the jest run's NATS and Redis) and a gateway in this process; management-api's
 * application resolution and API key check are answered by a stub. An operator's mute with unmuting
 * disabled (interface A, channel or connection level) holds whatever the client reported before,
 * and the registry refuses such an unmute itself (the edge's copy of the settings may lag behind);
 * the answer to a pipelined register lists only what precedes it; answers keep the order of the
 * frames, refusals of the frame schema included; an open pipelined before a leave of its channel is
 * answered as if handled alone.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  RuntimeSubjects,
  Subjects,
  type ChannelClaim,
  type ClientRef,
  type EdgeReport,
  type ResolvedApplication,
  type ServerPush,
} from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor, type SpawnedService } from '@switchboard/testing';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { nestRequest, registerToken, spawnTestRegistry } from '../testing/registry.testing.js';
import { identity, TestSyncClient, unmuteRefusal, type Answer, type Identity } from '../testing/sync-client.testing.js';

const APP = 'app-edge-promises';
const ORG = 'org-edge-promises';
const SECRET = 'edge-promises-secret';
const API_KEY = 'sb_edge-promises-key';
const CLAIMS: ChannelClaim[] = [{ id: 'room-a' }, { id: 'room-b' }, { id: 'room-c' }];

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const codes = (answers: Answer[]) => answers.map((a) => (a.type === 'error' ? a.error.code : 'ok'));

const token = (id: Identity) => registerToken(id, { applicationId: APP, secret: SECRET, channels: CLAIMS });

/** Sends requests in one write (as a pipelining client does); resolves with their answers. */
function pipelined(client: TestSyncClient, requests: Array<[string, unknown, string?]>): Promise<Answer[]> {
  const raw = (client.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
  raw.cork();
  const answers = requests.map(([type, data, id]) => client.request(type, data, id));
  raw.uncork();
  return Promise.all(answers);
}

describe('/sync edge promises against runtime-registry', () => {
  const servers = testServers();
  const ns = testNamespace('gw_promises');
  let nc: NatsConnection;
  let registry: SpawnedService;
  let gateway: TestGateway;
  const clients: TestSyncClient[] = [];

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

  /** A report straight to the registry, as the gateway sends it; rejects with the registry's error. */
  const report = (r: EdgeReport) => nestRequest(nc, ns, RuntimeSubjects.edge, { report: r });

  /** An interface A request to the gateway; resolves with the status and the JSON body (if any). */
  async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${gateway.url}/admin/api/v1.0/applications/${APP}${path}`, {
      method,
      headers: { 'x-api-key': API_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const connectionPath = (id: Identity, channelId: string, connectionId: string) =>
    `/channels/${channelId}/users/${id.userId}/devices/${id.deviceId}/clients/${id.clientId}/connections/${connectionId}`;

  async function registered(id: Identity = identity()) {
    const client = await TestSyncClient.open(gateway.syncUrl);
    clients.push(client);
    await client.ok('register', { token: token(id) });
    const ref: ClientRef = { applicationId: APP, ...id };
    return { client, id, ref };
  }

  /** Resolves once the client got a settings push for the connection that `match` accepts. */
  const settingsPushed = (
    client: TestSyncClient,
    connectionId: string,
    match: (s: Extract<ServerPush, { type: 'settings' }>['settings']) => boolean,
  ) =>
    waitFor(
      () => client.pushes.some((p) => p.type === 'settings' && p.connectionId === connectionId && match(p.settings)),
      { description: `a settings push for ${connectionId}` },
    );

  beforeAll(async () => {
    nc = await connect({ servers: servers.natsUrl });
    const application: ResolvedApplication = {
      applicationId: APP,
      applicationConfigId: 'cfg-edge-promises',
      organizationId: ORG,
      sharedSecret: SECRET,
      disabled: false,
    };
    stub(RuntimeSubjects.resolveApplication, () => application);
    stub(Subjects.apiKeyVerify, (data: { apiKey: string }) =>
      data.apiKey === API_KEY
        ? { valid: true, keyId: 'edge-promises', organizationId: ORG, operator: false }
        : { valid: false },
    );
    await nc.flush();
    [registry, gateway] = await Promise.all([
      spawnTestRegistry(servers.natsUrl, servers.redisUrl, ns),
      startTestGateway(servers.natsUrl, ns, { SYNC_RECONCILE_INTERVAL_MS: '0' }),
    ]);
  }, 60000);

  afterEach(() => {
    for (const c of clients.splice(0)) c.terminate();
  });

  afterAll(async () => {
    await gateway?.close();
    await registry?.stop();
    await nc?.close();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
  });

  describe('an operator mute with unmuting disabled', () => {
    it('at the channel level refuses the unmute of a client that never reported its own mute, until unmuting is enabled again', async () => {
      const { client, id } = await registered();
      await client.ok('join', { channelId: 'room-a' });
      await client.openPeerAudio('room-a', 'cn-1');
      // A connection the channel's writes exclude keeps its own say.
      await client.openPeerAudio('room-a', 'cn-free');
      expect(
        (await admin('PATCH', '/channels/room-a', { audioMuted: true, excludedConnectionIds: ['cn-free'] })).status,
      ).toBe(204);
      expect((await admin('PATCH', '/channels/room-a', { audioUnmuteDisabled: true })).status).toBe(204);
      await settingsPushed(client, 'cn-1', (s) => s.audioMuted && s.audioUnmuteDisabled);

      const refused = await client.request('connection.update', { connectionId: 'cn-1', localAudioMuted: false });
      expect(refused).toEqual(unmuteRefusal('localAudioMuted'));
      const shown = await admin('GET', connectionPath(id, 'room-a', 'cn-1'));
      expect(shown.body).toEqual(expect.objectContaining({ localAudioMuted: true, localAudioUnmuteDisabled: true }));
      expect(await client.ok('connection.update', { connectionId: 'cn-free', localAudioMuted: false })).toEqual({
        connectionId: 'cn-free',
        localAudioMuted: false,
        localVideoMuted: false,
      });

      expect((await admin('PATCH', '/channels/room-a', { audioUnmuteDisabled: false })).status).toBe(204);
      await settingsPushed(client, 'cn-1', (s) => s.audioMuted && !s.audioUnmuteDisabled);
      expect(await client.ok('connection.update', { connectionId: 'cn-1', localAudioMuted: false })).toEqual({
        connectionId: 'cn-1',
        localAudioMuted: false,
        localVideoMuted: false,
      });
    });

    it('at the connection level refuses the unmute, and interface A still shows the connection muted', async () => {
      const { client, id } = await registered();
      await client.ok('join', { channelId: 'room-b' });
      await client.ok('connection.open', {
        channelId: 'room-b',
        connectionId: 'cn-2',
        type: 'peer',
        streams: { video: { direction: 'sendrecv', muted: false } },
      });
      const path = connectionPath(id, 'room-b', 'cn-2');
      expect((await admin('PATCH', path, { videoMuted: true })).status).toBe(204);
      expect((await admin('PATCH', path, { videoUnmuteDisabled: true })).status).toBe(204);
      // Not waiting for the settings push: the registry decides, whatever the edge heard of yet.
      const refused = await client.request('connection.update', { connectionId: 'cn-2', localVideoMuted: false });
      expect(refused).toEqual(unmuteRefusal('localVideoMuted'));
      expect((await admin('GET', path)).body).toEqual(
        expect.objectContaining({ localVideoMuted: true, localVideoUnmuteDisabled: true }),
      );
    });

    it('refuses an unmute pipelined behind the open, before the edge has the settings: the registry decides', async () => {
      const { client, id } = await registered();
      await client.ok('join', { channelId: 'room-b' });
      expect((await admin('PATCH', '/channels/room-b', { audioMuted: true, audioUnmuteDisabled: true })).status).toBe(
        204,
      );
      const answers = await pipelined(client, [
        [
          'connection.open',
          { channelId: 'room-b', connectionId: 'cn-4', type: 'peer', streams: { audio: { direction: 'sendrecv' } } },
        ],
        ['connection.update', { connectionId: 'cn-4', localAudioMuted: false }],
        ['connection.update', { connectionId: 'cn-4', tag: 'after' }],
      ]);
      expect(codes(answers)).toEqual(['ok', 'UnmuteDisabled', 'ok']);
      expect(answers[1]).toEqual(
        expect.objectContaining({
          error: expect.objectContaining({ details: [expect.objectContaining({ field: 'localAudioMuted' })] }),
        }),
      );
      expect((await admin('GET', connectionPath(id, 'room-b', 'cn-4'))).body).toEqual(
        expect.objectContaining({ localAudioMuted: true, tag: 'after' }),
      );
    });

    it('is enforced by the registry itself: an unmute reported past a stale edge is refused and nothing is written', async () => {
      const { client, id, ref } = await registered();
      await client.ok('join', { channelId: 'room-c' });
      await client.openPeerAudio('room-c', 'cn-3');
      expect(
        (await admin('PATCH', `/channels/room-c/users/${id.userId}`, { audioMuted: true, audioUnmuteDisabled: true }))
          .status,
      ).toBe(204);
      await expect(
        report({
          kind: 'connection.update',
          client: ref,
          channelId: 'room-c',
          connectionId: 'cn-3',
          localAudioMuted: false,
          tag: 'changed',
        }),
      ).rejects.toThrow(/Forbidden/);
      expect((await admin('GET', connectionPath(id, 'room-c', 'cn-3'))).body).toEqual(
        expect.objectContaining({ localAudioMuted: true, tag: null }),
      );
      // A mute, or an update that unmutes nothing, goes through.
      await report({
        kind: 'connection.update',
        client: ref,
        channelId: 'room-c',
        connectionId: 'cn-3',
        localAudioMuted: true,
        tag: 'changed',
      });
      expect((await admin('GET', connectionPath(id, 'room-c', 'cn-3'))).body).toEqual(
        expect.objectContaining({ localAudioMuted: true, tag: 'changed' }),
      );
    });
  });

  describe('pipelined requests', () => {
    it('answer a register with the channels and connections as of it, not those the requests after it made', async () => {
      const id = identity();
      const client = await TestSyncClient.open(gateway.syncUrl);
      clients.push(client);
      const first = await pipelined(client, [
        ['register', { token: token(id) }],
        ['join', { channelId: 'room-a' }],
        ['connection.open', { channelId: 'room-a', connectionId: 'p-1', type: 'peer', streams: {} }],
        ['connection.state', { connectionId: 'p-1', state: 'initializing' }],
      ]);
      expect(codes(first)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(first[0]).toEqual(
        expect.objectContaining({ data: expect.objectContaining({ resumed: false, channels: [], connections: [] }) }),
      );

      // A resume on another socket, with more requests behind it: its answer lists what the session held.
      const again = await TestSyncClient.open(gateway.syncUrl);
      clients.push(again);
      const second = await pipelined(again, [
        ['register', { token: token(id) }],
        ['join', { channelId: 'room-b' }],
        ['connection.open', { channelId: 'room-b', connectionId: 'p-2', type: 'peer', streams: {} }],
        ['connection.state', { connectionId: 'p-1', state: 'connecting' }],
      ]);
      expect(codes(second)).toEqual(['ok', 'ok', 'ok', 'ok']);
      const resumed = (
        second[0] as {
          data: {
            resumed: boolean;
            channels: Array<{ channelId: string }>;
            connections: Array<{ connectionId: string; state: string }>;
          };
        }
      ).data;
      expect(resumed.resumed).toBe(true);
      expect(resumed.channels.map((c) => c.channelId)).toEqual(['room-a']);
      expect(resumed.connections).toEqual([
        expect.objectContaining({ connectionId: 'p-1', channelId: 'room-a', state: 'initializing' }),
      ]);
    });

    it('are answered in the order sent, refusals of the frame schema included', async () => {
      const { client } = await registered();
      await client.ok('join', { channelId: 'room-a' });
      const raw = (client.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
      raw.cork();
      const sent = [
        client.request(
          'connection.open',
          { channelId: 'room-a', connectionId: 'o-1', type: 'peer', streams: {} },
          'ord-1',
        ),
        client.request('connection.state', { connectionId: 'o-1', state: 'initializing', bogus: true }, 'ord-2'),
        client.request('connection.state', { connectionId: 'o-1', state: 'initializing' }, 'ord-3'),
      ];
      client.ws.send(JSON.stringify({ id: 'ord-4', type: 'ping', extra: 1 }));
      sent.push(client.request('ping', {}, 'ord-5'));
      raw.uncork();
      await Promise.all(sent);
      await waitFor(() => client.answers.some((a) => a.id === 'ord-4'), { description: 'the answer to ord-4' });
      const answers = client.answers.filter((a) => typeof a.id === 'string' && a.id.startsWith('ord-'));
      expect(answers.map((a) => a.id)).toEqual(['ord-1', 'ord-2', 'ord-3', 'ord-4', 'ord-5']);
      expect(codes(answers)).toEqual(['ok', 'ValidationFailed', 'ok', 'InvalidFrame', 'ok']);
    });

    it('answer an open followed by a leave of its channel as if handled one after the other', async () => {
      const { client, ref } = await registered();
      const answers = await pipelined(client, [
        ['join', { channelId: 'room-c' }],
        ['connection.open', { channelId: 'room-c', connectionId: 'l-1', type: 'peer', streams: {} }],
        ['leave', { channelId: 'room-c' }],
      ]);
      expect(codes(answers)).toEqual(['ok', 'ok', 'ok']);
      expect(answers[1]).toEqual(
        expect.objectContaining({ data: expect.objectContaining({ connectionId: 'l-1', state: 'new' }) }),
      );
      const registration = (await report({ kind: 'gateway.sessions', clients: [ref] } as unknown as EdgeReport)) as {
        clients: Array<{ channels: unknown[] } | null>;
      };
      expect(registration.clients[0]?.channels).toEqual([]);
    });
  });
});
