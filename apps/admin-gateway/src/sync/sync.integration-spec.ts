/**
 * The /sync client edge against a fake runtime-registry and a fake management-api on the real NATS:
 * token checks (standard Base64 and base64url, tampered, expired, foreign), the secret cache,
 * channel claims, the connection state machine, unmute refusal, pushes to the right socket, drops
 * with their grace period, resumes, takeovers and frame errors.
 */
import {
  encodeClientToken,
  SYNC_CLOSE_CODES,
  type ChannelClaim,
  type ClientTokenPayload,
  type EdgeReport,
  type ServerPush,
  type SyncRegisterResult,
} from '@switchboard/contracts';
import { testNamespace, testServers, waitFor } from '@switchboard/testing';
import { createHmac, randomBytes } from 'node:crypto';
import net from 'node:net';
import WebSocket from 'ws';
import { DEFAULT_SETTINGS, startFakeRuntime, WireFailure, type FakeRuntime } from '../testing/fake-runtime.testing.js';
import { metric, startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { identity, TestSyncClient, unmuteRefusal, type Identity } from '../testing/sync-client.testing.js';

const APP = 'app-sync';
const SECRET = 'shared-secret-ü-1';
const TURN_SECRET = 'turn-shared-secret';
const now = () => Math.floor(Date.now() / 1000);

function token(
  id: Identity,
  options: {
    channels?: ChannelClaim[];
    type?: 'register' | 'join';
    app?: string;
    secret?: string;
    encoding?: 'base64' | 'base64url';
    iat?: number;
    exp?: number;
    roles?: string[];
  } = {},
) {
  const payload: ClientTokenPayload = {
    iat: options.iat ?? now(),
    exp: options.exp ?? now() + 600,
    type: options.type ?? 'register',
    applicationId: options.app ?? APP,
    ...id,
    clientRoles: options.roles ?? ['participant'],
    channels: options.channels ?? [{ id: 'room-1' }, { id: 'room-2' }],
  };
  return encodeClientToken(payload, options.secret ?? SECRET, options.encoding ?? 'base64');
}

/** A /sync socket that completes its upgrade, then reads nothing and answers nothing. */
async function silentSocket(syncUrl: string): Promise<net.Socket> {
  const url = new URL(syncUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      if (chunk.toString('latin1').startsWith('HTTP/1.1 101')) resolve();
      else reject(new Error(`upgrade refused: ${chunk.toString('latin1').split('\r\n')[0]}`));
    });
  });
  return socket;
}

const pushCounter = (gw: TestGateway, outcome: string) => metric(gw, 'sync_pushes_total', { outcome });

describe('/sync client edge', () => {
  const servers = testServers();
  const ns = testNamespace('gw_sync');
  let fake: FakeRuntime;
  let gateway: TestGateway;
  let shortGrace: TestGateway;
  /** Retries the unregisters the registry refused after 20 ms (doubling). */
  let retrying: TestGateway;
  const clients: TestSyncClient[] = [];

  async function open(gw: TestGateway = gateway): Promise<TestSyncClient> {
    const client = await TestSyncClient.open(gw.syncUrl);
    clients.push(client);
    return client;
  }

  async function registered(
    id: Identity = identity(),
    options: Parameters<typeof token>[1] = {},
    gw: TestGateway = gateway,
  ) {
    const client = await open(gw);
    const result = await client.ok('register', { token: token(id, options), userAlias: 'Ann' });
    return { client, id, result };
  }

  const reportsOf = (id: Identity) => fake.reportsOf(id.clientId);
  const kinds = (id: Identity) => reportsOf(id).map((r) => r.kind);
  const ref = (id: Identity) => ({ applicationId: APP, ...id });
  /** The session id the client's (last) register report carried. */
  const registerSession = (id: Identity) =>
    (
      reportsOf(id)
        .filter((r) => r.kind === 'client.register')
        .at(-1) as { sessionId?: string } | undefined
    )?.sessionId;

  beforeAll(async () => {
    fake = await startFakeRuntime(servers.natsUrl, ns);
    fake.applications.set(APP, {
      applicationId: APP,
      applicationConfigId: 'cfg-1',
      organizationId: 'org-sync',
      sharedSecret: SECRET,
      disabled: false,
    });
    fake.applications.set('app-off', {
      applicationId: 'app-off',
      applicationConfigId: 'cfg-2',
      organizationId: 'org-sync',
      sharedSecret: SECRET,
      disabled: true,
    });
    fake.applications.set('app-other', {
      applicationId: 'app-other',
      applicationConfigId: 'cfg-3',
      organizationId: 'org-2',
      sharedSecret: 'other-secret',
      disabled: false,
    });
    [gateway, shortGrace, retrying] = await Promise.all([
      startTestGateway(servers.natsUrl, ns, {
        SYNC_GRACE_PERIOD_MS: '600000',
        SYNC_REGISTER_TIMEOUT_MS: '30000',
        SYNC_MAX_SEND_BUFFER_BYTES: '65536',
        ICE_STUN_URLS: 'stun:stun.example.test:3478',
        ICE_TURN_URLS: 'turn:turn.example.test:3478?transport=udp,turns:turn.example.test:5349',
        ICE_TURN_SECRET: TURN_SECRET,
        ICE_TURN_CREDENTIAL_TTL_SECONDS: '3600',
      }),
      startTestGateway(servers.natsUrl, ns, {
        SYNC_GRACE_PERIOD_MS: '100',
        SYNC_REGISTER_TIMEOUT_MS: '300',
        SYNC_MAX_FRAME_BYTES: '2048',
        SYNC_MAX_PENDING_REQUESTS: '2',
      }),
      startTestGateway(servers.natsUrl, ns, { SYNC_GRACE_PERIOD_MS: '100', SYNC_UNREGISTER_RETRY_MS: '20' }),
    ]);
  });

  afterEach(() => {
    fake.onEdge = (report) => defaultAnswer(report);
    fake.onSequence = undefined;
    for (const c of clients.splice(0)) c.terminate();
  });

  afterAll(async () => {
    await Promise.all([gateway?.close(), shortGrace?.close(), retrying?.close()]);
    await fake?.close();
  });

  let defaultAnswer: (r: EdgeReport) => unknown;
  beforeAll(() => {
    defaultAnswer = fake.onEdge;
  });

  describe('register', () => {
    it('accepts a token in standard padded Base64 and reports the client to the registry', async () => {
      const id = identity();
      const tk = token(id);
      // Standard alphabet, padded: the 32-byte HMAC is 44 characters ending in '='.
      expect(tk).toMatch(/^[A-Za-z0-9+/]+=*\.[A-Za-z0-9+/]+=*\.[A-Za-z0-9+/]{43}=$/);
      const client = await open();
      const result = await client.ok('register', { token: tk, userAlias: 'Ann', deviceAlias: 'laptop', tag: 't1' });
      const { iceServers, ...rest } = result as SyncRegisterResult;
      expect(rest).toEqual({
        protocolVersion: 2,
        ...ref(id),
        gatewayId: gateway.gatewayId,
        resumed: false,
        channels: [],
        connections: [],
        droppedPushes: 0,
      });
      // TURN credentials as coturn's use-auth-secret checks them: HMAC-SHA1 of "<expiry>:<clientId>".
      const [stun, turn] = iceServers;
      expect(stun).toEqual({ urls: ['stun:stun.example.test:3478'] });
      expect(turn!.urls).toEqual(['turn:turn.example.test:3478?transport=udp', 'turns:turn.example.test:5349']);
      const [expiry, clientId] = turn!.username!.split(':');
      expect(clientId).toBe(id.clientId);
      expect(Number(expiry) - Date.now() / 1000).toBeGreaterThan(3590);
      expect(Number(expiry) - Date.now() / 1000).toBeLessThanOrEqual(3600);
      expect(turn!.credential).toBe(createHmac('sha1', TURN_SECRET).update(turn!.username!).digest('base64'));
      expect(reportsOf(id)).toEqual([
        {
          kind: 'client.register',
          client: {
            ...ref(id),
            userAlias: 'Ann',
            deviceAlias: 'laptop',
            tag: 't1',
            roles: ['participant'],
            protocol: 'websocket',
          },
          organizationId: 'org-sync',
          gatewayId: gateway.gatewayId,
          claims: [{ id: 'room-1' }, { id: 'room-2' }],
          sessionId: expect.any(String),
        },
      ]);
    });

    it('accepts a token in base64url', async () => {
      const id = identity();
      const client = await open();
      const tk = token(id, { encoding: 'base64url', channels: [{ id: 'room-ü?>>' }] });
      expect(tk).not.toMatch(/[+/=]/);
      expect((await client.ok('register', { token: tk })).clientId).toBe(id.clientId);
    });

    it('makes ids the token does not carry', async () => {
      const client = await open();
      const tk = encodeClientToken({ iat: now(), exp: now() + 60, type: 'register', applicationId: APP }, SECRET);
      const result = await client.ok('register', { token: tk });
      expect(result).toEqual(
        expect.objectContaining({
          userId: expect.any(String),
          deviceId: expect.any(String),
          clientId: expect.any(String),
        }),
      );
    });

    async function refused(tk: string, code: string, closeCode: number, extra: Record<string, unknown> = {}) {
      const client = await open();
      const before = fake.reports.length;
      const answer = await client.request('register', { token: tk, ...extra });
      expect(answer).toEqual({
        type: 'error',
        id: expect.anything(),
        error: expect.objectContaining({ code, message: expect.any(String) }),
      });
      expect((await client.closed).code).toBe(closeCode);
      expect(fake.reports.slice(before).filter((r) => r.kind === 'client.register')).toEqual([]);
      return answer;
    }

    it('refuses a tampered token (payload changed, signature kept) with TokenInvalid and closes 4001', async () => {
      const id = identity();
      const [header, , signature] = token(id).split('.');
      const forged = Buffer.from(
        JSON.stringify({
          iat: now(),
          exp: now() + 600,
          type: 'register',
          applicationId: APP,
          ...id,
          channels: [{ id: 'vip' }],
        }),
      ).toString('base64');
      await refused(`${header}.${forged}.${signature}`, 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
    });

    it('refuses a token signed with another secret, or garbage, with 4001', async () => {
      await refused(token(identity(), { secret: 'not-the-secret' }), 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
      await refused('not.a.token!', 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
      const wrongAlg = `${Buffer.from('{"alg":"none"}').toString('base64')}.${token(identity()).split('.')[1]}.AAAA`;
      await refused(wrongAlg, 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
    });

    it('refuses a token whose payload breaks the contract, naming the field', async () => {
      const tk = encodeClientToken(
        {
          iat: now(),
          exp: now() + 60,
          type: 'register',
          applicationId: APP,
          channels: [{ id: 'a', colour: 'red' }],
        } as never,
        SECRET,
      );
      const answer = await refused(tk, 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
      expect(answer.type === 'error' && answer.error.details).toEqual([
        expect.objectContaining({ field: 'channels[0].colour' }),
      ]);
    });

    it('ignores claims it does not use (iss, jti, ...) and honours nbf', async () => {
      const id = identity();
      const base = { iat: now(), exp: now() + 60, type: 'register', applicationId: APP, ...id };
      const client = await open();
      const extra = encodeClientToken(
        { ...base, iss: 'https://issuer.example', jti: 'j-1', nbf: now() - 1 } as never,
        SECRET,
      );
      expect((await client.ok('register', { token: extra })).clientId).toBe(id.clientId);
      await refused(
        encodeClientToken({ ...base, nbf: now() + 3600 } as never, SECRET),
        'TokenExpired',
        SYNC_CLOSE_CODES.tokenExpired,
      );
    });

    it('refuses a join token at register', async () => {
      await refused(token(identity(), { type: 'join' }), 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
    });

    it('refuses an expired token with TokenExpired and closes 4002, within the clock skew it still accepts', async () => {
      await refused(
        token(identity(), { iat: now() - 3600, exp: now() - 120 }),
        'TokenExpired',
        SYNC_CLOSE_CODES.tokenExpired,
      );
      await refused(
        token(identity(), { iat: now() + 3600, exp: now() + 7200 }),
        'TokenExpired',
        SYNC_CLOSE_CODES.tokenExpired,
      );
      const client = await open();
      await client.ok('register', { token: token(identity(), { iat: now() - 60, exp: now() - 5 }) });
    });

    it('refuses an unknown, a disabled or another application with ApplicationRefused and closes 4003', async () => {
      await refused(
        token(identity(), { app: 'no-such-app' }),
        'ApplicationRefused',
        SYNC_CLOSE_CODES.applicationRefused,
      );
      await refused(token(identity(), { app: 'app-off' }), 'ApplicationRefused', SYNC_CLOSE_CODES.applicationRefused);
      await refused(token(identity()), 'ApplicationRefused', SYNC_CLOSE_CODES.applicationRefused, {
        applicationId: 'app-other',
      });
      // Signed by the other application's secret but claiming this one: the signature does not match.
      await refused(token(identity(), { secret: 'other-secret' }), 'TokenInvalid', SYNC_CLOSE_CODES.tokenInvalid);
    });

    it('keeps the shared secret per replica and drops it when management-api announces a change', async () => {
      await registered();
      const before = fake.resolves.filter((a) => a === APP).length;
      await registered();
      expect(fake.resolves.filter((a) => a === APP).length).toBe(before);
      await fake.applicationChanged(APP);
      await waitFor(async () => {
        await registered();
        return fake.resolves.filter((a) => a === APP).length > before;
      });
    });

    it('answers NotRegistered to anything before register, and AlreadyRegistered to a second register', async () => {
      const client = await open();
      expect(await client.request('join', { channelId: 'room-1' })).toEqual({
        type: 'error',
        id: 1,
        error: expect.objectContaining({ code: 'NotRegistered' }),
      });
      expect((await client.request('ping')).type).toBe('result');
      const id = identity();
      await client.ok('register', { token: token(id) });
      expect(await client.request('register', { token: token(id) })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'AlreadyRegistered' }) }),
      );
    });

    it('closes a socket that does not register in time with 4008', async () => {
      const client = await open(shortGrace);
      expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.registerTimeout);
      expect(client.unsolicitedErrors).toEqual([expect.objectContaining({ code: 'NotRegistered' })]);
    });
  });

  describe('channels and claims', () => {
    it('joins a claimed channel and reports the claim; refuses an unclaimed one', async () => {
      const { client, id } = await registered(identity(), { channels: [{ id: 'room-1', disableSendVideo: true }] });
      const joined = await client.ok('join', { channelId: 'room-1' });
      expect(joined).toEqual({
        channelId: 'room-1',
        channel: expect.objectContaining({ id: 'room-1' }),
        settings: DEFAULT_SETTINGS,
        claim: { id: 'room-1', disableSendVideo: true },
        upstreams: [],
      });
      expect(reportsOf(id).at(-1)).toEqual({
        kind: 'client.join',
        client: ref(id),
        channelId: 'room-1',
        claim: { id: 'room-1', disableSendVideo: true },
      });
      const refused = await client.request('join', { channelId: 'room-9' });
      expect(refused).toEqual(
        expect.objectContaining({
          type: 'error',
          error: expect.objectContaining({
            code: 'Forbidden',
            details: [expect.objectContaining({ field: 'channelId' })],
          }),
        }),
      );
      expect(await client.request('join', { channelId: 'room-1' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'AlreadyJoined' }) }),
      );
      expect(kinds(id)).toEqual(['client.register', 'client.join']);
    });

    it('takes a fresh claim set from a join token of the same client; refuses one of another client, the socket staying open', async () => {
      const { client, id } = await registered(identity(), { channels: [] });
      expect((await client.request('join', { channelId: 'late-room' })).type).toBe('error');
      const other = identity();
      const foreign = await client.request('join', {
        channelId: 'late-room',
        token: token(other, { type: 'join', channels: [{ id: 'late-room' }] }),
      });
      expect(foreign).toEqual(expect.objectContaining({ error: expect.objectContaining({ code: 'TokenInvalid' }) }));
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
      const joined = await client.ok('join', {
        channelId: 'late-room',
        token: token(id, { type: 'join', channels: [{ id: 'late-room' }] }),
      });
      expect(joined.claim).toEqual({ id: 'late-room' });
    });

    const joinClaims: { type: 'join'; channels: ChannelClaim[] } = { type: 'join', channels: [{ id: 'late-room' }] };
    it.each([
      [
        'expired',
        'TokenExpired',
        SYNC_CLOSE_CODES.tokenExpired,
        (id: Identity) => token(id, { ...joinClaims, iat: now() - 999, exp: now() - 500 }),
      ],
      [
        'not valid yet',
        'TokenExpired',
        SYNC_CLOSE_CODES.tokenExpired,
        (id: Identity) => token(id, { ...joinClaims, iat: now() + 3600, exp: now() + 7200 }),
      ],
      [
        'tampered (payload changed, signature kept)',
        'TokenInvalid',
        SYNC_CLOSE_CODES.tokenInvalid,
        (id: Identity) => {
          const [header, , signature] = token(id, joinClaims).split('.');
          const forged = Buffer.from(
            JSON.stringify({
              iat: now(),
              exp: now() + 600,
              type: 'join',
              applicationId: APP,
              ...id,
              channels: [{ id: 'late-room' }, { id: 'vip' }],
            }),
          ).toString('base64');
          return `${header}.${forged}.${signature}`;
        },
      ],
      [
        'signed with another secret',
        'TokenInvalid',
        SYNC_CLOSE_CODES.tokenInvalid,
        (id: Identity) => token(id, { ...joinClaims, secret: 'not-the-secret' }),
      ],
      [
        'a register token',
        'TokenInvalid',
        SYNC_CLOSE_CODES.tokenInvalid,
        (id: Identity) => token(id, { ...joinClaims, type: 'register' }),
      ],
      [
        'of another application',
        'ApplicationRefused',
        SYNC_CLOSE_CODES.applicationRefused,
        (id: Identity) => token(id, { ...joinClaims, app: 'app-other', secret: 'other-secret' }),
      ],
    ])(
      'refuses a join token that is %s with an error frame and closes the socket as register does',
      async (_label, code, closeCode, make: (id: Identity) => string) => {
        const { client, id } = await registered(identity(), { channels: [] });
        const refusedJoin = client.request('join', { channelId: 'late-room', token: make(id) });
        // Sent with it, in the same read or after: handled no more once the socket is refused.
        const after = client.request('join', { channelId: 'late-room', token: token(id, joinClaims) });
        expect(await refusedJoin).toEqual({
          type: 'error',
          id: expect.anything(),
          error: expect.objectContaining({ code, message: expect.any(String) }),
        });
        expect((await client.closed).code).toBe(closeCode);
        expect(await Promise.race([after, new Promise((r) => setTimeout(() => r('unanswered'), 200))])).toBe(
          'unanswered',
        );
        // Nothing joined; the client stays registered for the grace period, as after any drop, and may resume.
        expect(kinds(id)).toEqual(['client.register']);
        const again = await open();
        expect(await again.ok('register', { token: token(id) })).toEqual(
          expect.objectContaining({ resumed: true, channels: [] }),
        );
      },
    );

    it('leaves a joined channel; leaving one not joined is NotJoined', async () => {
      const { client, id } = await registered();
      await client.ok('join', { channelId: 'room-1' });
      expect(await client.ok('leave', { channelId: 'room-1' })).toEqual({ channelId: 'room-1' });
      expect(reportsOf(id).at(-1)).toEqual({
        kind: 'client.leave',
        client: ref(id),
        channelId: 'room-1',
        sessionId: registerSession(id),
      });
      expect(await client.request('leave', { channelId: 'room-1' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'NotJoined' }) }),
      );
    });

    it('passes a registry refusal through as an error frame', async () => {
      const { client } = await registered();
      fake.onEdge = (report) => {
        if (report.kind === 'client.join') throw new (class extends Error {})('x');
        return defaultAnswer(report);
      };
      expect(await client.request('join', { channelId: 'room-1' })).toEqual(
        expect.objectContaining({ error: { code: 'Internal', message: expect.any(String) } }),
      );
      expect(await client.request('leave', { channelId: 'room-1' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'NotJoined' }) }),
      );
    });
  });

  describe('connections', () => {
    async function joinedClient(claim: ChannelClaim = { id: 'room-1' }) {
      const r = await registered(identity(), { channels: [claim] });
      await r.client.ok('join', { channelId: claim.id });
      return r;
    }

    it('opens an sfu connection and walks it new → initializing → connecting → connected', async () => {
      const { client, id } = await joinedClient();
      const opened = await client.ok('connection.open', {
        channelId: 'room-1',
        connectionId: 'cn-1',
        type: 'sfu',
        tag: 'cam',
        streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv', maxPixelCount: 921600 } },
      });
      expect(opened).toEqual({
        connectionId: 'cn-1',
        channelId: 'room-1',
        state: 'new',
        mediaServerId: '00000000-0000-4000-8000-000000000001',
        settings: DEFAULT_SETTINGS,
      });
      for (const state of ['initializing', 'connecting', 'connected'])
        expect(await client.ok('connection.state', { connectionId: 'cn-1', state })).toEqual({
          connectionId: 'cn-1',
          state,
        });
      expect(reportsOf(id).slice(2)).toEqual([
        {
          kind: 'connection.open',
          client: ref(id),
          channelId: 'room-1',
          connectionId: 'cn-1',
          type: 'sfu',
          tag: 'cam',
          streams: {
            audio: { direction: 'sendrecv' },
            video: { direction: 'sendrecv', maxPixelCount: 921600 },
            data: null,
          },
          remoteConnectionId: null,
        },
        ...['initializing', 'connecting', 'connected'].map((state) => ({
          kind: 'connection.state',
          client: ref(id),
          channelId: 'room-1',
          connectionId: 'cn-1',
          state,
          error: null,
          sessionId: registerSession(id),
        })),
      ]);
    });

    it('enforces the state machine: invalid transitions are refused and not reported; final states end the connection', async () => {
      const { client, id } = await joinedClient();
      const { connectionId } = await client.ok('connection.open', {
        channelId: 'room-1',
        type: 'mcu',
        streams: { audio: { direction: 'recvonly' } },
      });
      expect(connectionId).toMatch(/^[0-9a-f-]{36}$/);
      const skip = await client.request('connection.state', { connectionId, state: 'connected' });
      expect(skip).toEqual(
        expect.objectContaining({
          error: expect.objectContaining({
            code: 'InvalidTransition',
            details: [{ field: 'state', message: expect.stringContaining('initializing') }],
          }),
        }),
      );
      await client.ok('connection.state', { connectionId, state: 'initializing' });
      expect((await client.request('connection.state', { connectionId, state: 'new' })).type).toBe('error');
      await client.ok('connection.state', { connectionId, state: 'failing' });
      expect((await client.request('connection.state', { connectionId, state: 'connected' })).type).toBe('error');
      await client.ok('connection.state', {
        connectionId,
        state: 'failed',
        error: { code: 'ice', message: 'no candidates' },
      });
      expect(await client.request('connection.state', { connectionId, state: 'closing' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'UnknownConnection' }) }),
      );
      expect(
        reportsOf(id)
          .filter((r) => r.kind === 'connection.state')
          .map((r) => (r as { state: string }).state),
      ).toEqual(['initializing', 'failing', 'failed']);
      expect(await client.request('connection.state', { connectionId, state: 'flying' })).toEqual(
        expect.objectContaining({
          error: expect.objectContaining({
            code: 'ValidationFailed',
            details: [expect.objectContaining({ field: 'data.state' })],
          }),
        }),
      );
    });

    it('closes a connection through closing → closed, or at once with connection.close', async () => {
      const { client, id } = await joinedClient();
      await client.ok('connection.open', { channelId: 'room-1', connectionId: 'a', type: 'sfu', streams: {} });
      await client.ok('connection.state', { connectionId: 'a', state: 'closing' });
      await client.ok('connection.state', { connectionId: 'a', state: 'closed' });
      await client.ok('connection.open', {
        channelId: 'room-1',
        connectionId: 'b',
        type: 'peer',
        streams: { data: { direction: 'sendrecv' } },
        remoteConnectionId: 'a',
      });
      expect(await client.ok('connection.close', { connectionId: 'b' })).toEqual({ connectionId: 'b' });
      expect(reportsOf(id).at(-1)).toEqual({
        kind: 'connection.close',
        client: ref(id),
        channelId: 'room-1',
        connectionId: 'b',
        sessionId: registerSession(id),
      });
      expect((await client.request('connection.close', { connectionId: 'b' })).type).toBe('error');
    });

    it('refuses connections and streams the claim disables, and connections outside joined channels', async () => {
      const { client } = await joinedClient({ id: 'room-1', disableSfu: true, disableSendAudio: true });
      expect(await client.request('connection.open', { channelId: 'room-1', type: 'sfu', streams: {} })).toEqual(
        expect.objectContaining({
          error: expect.objectContaining({ code: 'Forbidden', details: [expect.objectContaining({ field: 'type' })] }),
        }),
      );
      expect(
        await client.request('connection.open', {
          channelId: 'room-1',
          type: 'mcu',
          streams: { audio: { direction: 'sendonly' } },
        }),
      ).toEqual(
        expect.objectContaining({
          error: expect.objectContaining({
            code: 'Forbidden',
            details: [expect.objectContaining({ field: 'streams.audio.direction' })],
          }),
        }),
      );
      expect(
        (
          await client.request('connection.open', {
            channelId: 'room-1',
            type: 'mcu',
            streams: { audio: { direction: 'recvonly' } },
          })
        ).type,
      ).toBe('result');
      expect(await client.request('connection.open', { channelId: 'room-2', type: 'mcu', streams: {} })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'NotJoined' }) }),
      );
    });

    it('mutes and unmutes, and refuses unmuting while the settings disable it', async () => {
      const { client, id } = await joinedClient();
      await client.ok('connection.open', {
        channelId: 'room-1',
        connectionId: 'm',
        type: 'sfu',
        streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv' } },
      });
      expect(
        await client.ok('connection.update', { connectionId: 'm', localAudioMuted: true, localVideoMuted: true }),
      ).toEqual({ connectionId: 'm', localAudioMuted: true, localVideoMuted: true });
      await fake.push(gateway.gatewayId, {
        deliveries: [
          {
            client: ref(id),
            push: {
              type: 'settings',
              channelId: 'room-1',
              connectionId: 'm',
              settings: { ...DEFAULT_SETTINGS, audioMuted: true, audioUnmuteDisabled: true },
            },
          },
        ],
      });
      expect(await client.push(0)).toEqual(expect.objectContaining({ type: 'settings', connectionId: 'm' }));
      const refused = await client.request('connection.update', { connectionId: 'm', localAudioMuted: false });
      expect(refused).toEqual(unmuteRefusal('localAudioMuted'));
      expect(await client.ok('connection.update', { connectionId: 'm', localVideoMuted: false })).toEqual({
        connectionId: 'm',
        localAudioMuted: true,
        localVideoMuted: false,
      });
      const updates = reportsOf(id).filter((r) => r.kind === 'connection.update');
      expect(updates).toEqual([
        {
          kind: 'connection.update',
          client: ref(id),
          channelId: 'room-1',
          connectionId: 'm',
          localAudioMuted: true,
          localVideoMuted: true,
        },
        { kind: 'connection.update', client: ref(id), channelId: 'room-1', connectionId: 'm', localVideoMuted: false },
      ]);
    });

    it('refuses unmuting a connection an operator muted, though the client never muted it, without reporting it', async () => {
      const { client, id } = await joinedClient();
      await client.ok('connection.open', {
        channelId: 'room-1',
        connectionId: 'om',
        type: 'sfu',
        streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv' } },
      });
      const settings = { ...DEFAULT_SETTINGS, videoMuted: true, videoUnmuteDisabled: true, audioUnmuteDisabled: true };
      await fake.push(gateway.gatewayId, {
        deliveries: [
          { client: ref(id), push: { type: 'settings', channelId: 'room-1', connectionId: 'om', settings } },
        ],
      });
      await client.push(0);
      const refused = await client.request('connection.update', { connectionId: 'om', localVideoMuted: false });
      expect(refused).toEqual(unmuteRefusal('localVideoMuted'));
      // Audio is not muted (neither by the operator nor by the client): unmute-disabled alone refuses nothing.
      expect(await client.ok('connection.update', { connectionId: 'om', localAudioMuted: false })).toEqual({
        connectionId: 'om',
        localAudioMuted: false,
        localVideoMuted: false,
      });
      expect(reportsOf(id).filter((r) => r.kind === 'connection.update')).toEqual([
        { kind: 'connection.update', client: ref(id), channelId: 'room-1', connectionId: 'om', localAudioMuted: false },
      ]);
    });

    it('reports client and connection stats', async () => {
      const { client, id } = await joinedClient();
      await client.ok('connection.open', { channelId: 'room-1', connectionId: 's', type: 'sfu', streams: {} });
      await client.ok('stats', { stats: { cpu: 0.5 } });
      await client.ok('stats', { connectionId: 's', stats: { rtt: 20 } });
      expect(reportsOf(id).slice(-2)).toEqual([
        { kind: 'client.stats', client: ref(id), stats: { cpu: 0.5 } },
        { kind: 'connection.stats', client: ref(id), channelId: 'room-1', connectionId: 's', stats: { rtt: 20 } },
      ]);
    });
  });

  describe('messages', () => {
    it('sends a client message with the registered identity as sender; the claim may forbid it', async () => {
      const { client, id } = await registered(identity(), {
        channels: [{ id: 'room-1' }, { id: 'quiet', disableSendMessage: true }],
        roles: ['host'],
      });
      await client.ok('join', { channelId: 'room-1' });
      await client.ok('join', { channelId: 'quiet' });
      expect(await client.ok('message', { channelId: 'room-1', message: 'hi', to: { userId: 'u-x' } })).toEqual({
        delivered: 1,
      });
      expect(reportsOf(id).at(-1)).toEqual({
        kind: 'client.message',
        client: ref(id),
        channelId: 'room-1',
        message: {
          message: 'hi',
          userId: id.userId,
          userAlias: 'Ann',
          deviceId: id.deviceId,
          deviceAlias: null,
          clientTag: null,
          clientRoles: ['host'],
        },
        to: { userId: 'u-x' },
      });
      expect(await client.request('message', { channelId: 'quiet', message: 'hi' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'Forbidden' }) }),
      );
      expect(await client.request('message', { channelId: 'room-2', message: 'hi' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'NotJoined' }) }),
      );
    });
  });

  describe('pushes', () => {
    it('delivers each push to the socket of its client only', async () => {
      const a = await registered();
      const b = await registered();
      const message: ServerPush = {
        type: 'message',
        channelId: null,
        message: { message: 'for b' },
        from: {
          userId: null,
          userAlias: null,
          deviceId: null,
          deviceAlias: null,
          clientId: null,
          clientTag: null,
          clientRoles: null,
        },
      };
      await fake.push(gateway.gatewayId, { deliveries: [{ client: ref(b.id), push: message }] });
      expect(await b.client.push(0)).toEqual(message);
      const forA: ServerPush = { ...message, message: { message: 'for a' } };
      await fake.push(gateway.gatewayId, { deliveries: [{ client: ref(a.id), push: forA }] }, true);
      expect(await a.client.push(0)).toEqual(forA);
      expect(b.client.pushes).toHaveLength(1);
    });

    it('applies kicks to the edge state: a kicked channel is left, a kicked connection is gone', async () => {
      const { client, id } = await registered();
      await client.ok('join', { channelId: 'room-1' });
      await client.ok('join', { channelId: 'room-2' });
      await client.ok('connection.open', { channelId: 'room-1', connectionId: 'k1', type: 'sfu', streams: {} });
      await client.ok('connection.open', { channelId: 'room-2', connectionId: 'k2', type: 'sfu', streams: {} });
      await fake.push(gateway.gatewayId, {
        deliveries: [
          { client: ref(id), push: { type: 'kicked', channelId: 'room-1' } },
          { client: ref(id), push: { type: 'kicked', channelId: 'room-2', connectionId: 'k2' } },
        ],
      });
      expect(await client.push(1)).toEqual({ type: 'kicked', channelId: 'room-2', connectionId: 'k2' });
      expect(await client.request('connection.state', { connectionId: 'k1', state: 'initializing' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'UnknownConnection' }) }),
      );
      expect(await client.request('connection.state', { connectionId: 'k2', state: 'initializing' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'UnknownConnection' }) }),
      );
      expect(await client.request('leave', { channelId: 'room-1' })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'NotJoined' }) }),
      );
      await client.ok('leave', { channelId: 'room-2' });
      // A rejoin after a kick is the client's decision, within its claims.
      await client.ok('join', { channelId: 'room-1' });
    });

    it('applies claim updates: a claim granted by an admin lets the client join', async () => {
      const { client, id } = await registered(identity(), { channels: [] });
      await fake.push(gateway.gatewayId, {
        deliveries: [
          { client: ref(id), push: { type: 'claim.updated', channelId: 'granted', claim: { id: 'granted' } } },
        ],
      });
      await client.push(0);
      await client.ok('join', { channelId: 'granted' });
    });

    const unmuteDisabled = { ...DEFAULT_SETTINGS, audioMuted: true, audioUnmuteDisabled: true };
    const settingsPush = (connectionId: string, settings: typeof DEFAULT_SETTINGS, version?: number): ServerPush => ({
      type: 'settings',
      channelId: 'room-1',
      connectionId,
      settings,
      ...(version === undefined ? {} : { version }),
    });

    it('applies a settings push only when its version is newer than the one applied: an older push arriving late is dropped', async () => {
      const { client, id } = await registered(identity(), { channels: [{ id: 'room-1' }] });
      await client.ok('join', { channelId: 'room-1' });
      await client.ok('connection.open', {
        channelId: 'room-1',
        connectionId: 'v1',
        type: 'sfu',
        streams: { audio: { direction: 'sendrecv', muted: true } },
      });
      const staleBefore = await pushCounter(gateway, 'stale');
      await fake.push(gateway.gatewayId, {
        deliveries: [{ client: ref(id), push: settingsPush('v1', unmuteDisabled, 8) }],
      });
      // Pushed by another registry replica: an earlier write (version 7) and the same one again, after it.
      await fake.push(gateway.gatewayId, {
        deliveries: [
          { client: ref(id), push: settingsPush('v1', DEFAULT_SETTINGS, 7) },
          { client: ref(id), push: settingsPush('v1', DEFAULT_SETTINGS, 8) },
        ],
      });
      const marker: ServerPush = { type: 'kicked', channelId: 'elsewhere' };
      await fake.push(gateway.gatewayId, { deliveries: [{ client: ref(id), push: marker }] });
      // Neither reached the client, nor changed what the edge holds.
      expect(await client.push(1)).toEqual(marker);
      expect(client.pushes[0]).toEqual(settingsPush('v1', unmuteDisabled, 8));
      expect(await pushCounter(gateway, 'stale')).toBe(staleBefore + 2);
      expect(await client.request('connection.update', { connectionId: 'v1', localAudioMuted: false })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'UnmuteDisabled' }) }),
      );
      // A newer write applies.
      await fake.push(gateway.gatewayId, {
        deliveries: [{ client: ref(id), push: settingsPush('v1', DEFAULT_SETTINGS, 9) }],
      });
      expect(await client.push(2)).toEqual(settingsPush('v1', DEFAULT_SETTINGS, 9));
      expect(await client.ok('connection.update', { connectionId: 'v1', localAudioMuted: false })).toEqual(
        expect.objectContaining({ localAudioMuted: false }),
      );
    });

    it('keeps settings pushed while the open was being answered over the older ones of the answer', async () => {
      const { client, id } = await registered(identity(), { channels: [{ id: 'room-1' }] });
      await client.ok('join', { channelId: 'room-1' });
      fake.onEdge = async (report) => {
        // A settings write the registry applied after the open, pushed before the open's answer arrives.
        if (report.kind === 'connection.open')
          await fake.push(gateway.gatewayId, {
            deliveries: [{ client: ref(id), push: settingsPush(report.connectionId, unmuteDisabled, 3) }],
          });
        return defaultAnswer(report);
      };
      const opened = await client.ok('connection.open', {
        channelId: 'room-1',
        connectionId: 'w1',
        type: 'sfu',
        streams: { audio: { direction: 'sendrecv', muted: true } },
      });
      expect(opened.settings).toEqual(unmuteDisabled);
      expect(await client.request('connection.update', { connectionId: 'w1', localAudioMuted: false })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'UnmuteDisabled' }) }),
      );
      // Versioned from then on: an older push is stale.
      await fake.push(gateway.gatewayId, {
        deliveries: [
          { client: ref(id), push: settingsPush('w1', DEFAULT_SETTINGS, 2) },
          { client: ref(id), push: { type: 'kicked', channelId: 'elsewhere' } },
        ],
      });
      expect(await client.push(1)).toEqual({ type: 'kicked', channelId: 'elsewhere' });
      expect(await client.request('connection.update', { connectionId: 'w1', localAudioMuted: false })).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'UnmuteDisabled' }) }),
      );
    });

    it('closes the socket with 4010 when the registry unregisters the client, reporting nothing back', async () => {
      const { client, id } = await registered();
      await fake.push(gateway.gatewayId, {
        deliveries: [{ client: ref(id), push: { type: 'unregistered', reason: 'kicked' } }],
      });
      expect(await client.push(0)).toEqual({ type: 'unregistered', reason: 'kicked' });
      expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.unregistered);
      expect(kinds(id)).toEqual(['client.register']);
    });
  });

  describe('backpressure', () => {
    it('closes a client that does not read (4029) and keeps its pushes for a resume', async () => {
      const id = identity();
      const { client } = await registered(id);
      const raw = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      raw.pause();
      const big: ServerPush = {
        type: 'message',
        channelId: null,
        message: { message: 'x'.repeat(50000) },
        from: {
          userId: null,
          userAlias: null,
          deviceId: null,
          deviceAlias: null,
          clientId: null,
          clientTag: null,
          clientRoles: null,
        },
      };
      const keptBefore = await pushCounter(gateway, 'kept');
      await waitFor(
        async () => {
          for (let i = 0; i < 20; i++)
            await fake.push(gateway.gatewayId, { deliveries: [{ client: ref(id), push: big }] });
          return (await pushCounter(gateway, 'kept')) > keptBefore;
        },
        { timeoutMs: 30000, description: 'pushes kept instead of sent to the slow socket' },
      );
      raw.resume();
      expect([SYNC_CLOSE_CODES.slowConsumer, 1006]).toContain((await client.closed).code);
      const again = await open();
      expect((await again.ok('register', { token: token(id) })).resumed).toBe(true);
      expect(await again.push(0)).toEqual(big);
    });
  });

  describe('drops, grace period and resume', () => {
    it('unregisters a dropped client after the grace period and closes its connections', async () => {
      const { client, id } = await registered(identity(), {}, shortGrace);
      await client.ok('join', { channelId: 'room-1' });
      await client.ok('connection.open', { channelId: 'room-1', connectionId: 'g1', type: 'sfu', streams: {} });
      client.terminate();
      await waitFor(() => kinds(id).includes('client.unregister'), { description: 'the unregister report' });
      expect(reportsOf(id).slice(-2)).toEqual([
        {
          kind: 'connection.close',
          client: ref(id),
          channelId: 'room-1',
          connectionId: 'g1',
          sessionId: registerSession(id),
        },
        {
          kind: 'client.unregister',
          client: ref(id),
          reason: 'dropped',
          gatewayId: shortGrace.gatewayId,
          sessionId: registerSession(id),
        },
      ]);
    });

    it('resumes a client that registers again within the grace period, with its state and the pushes it missed', async () => {
      const id = identity();
      const first = await registered(id);
      await first.client.ok('join', { channelId: 'room-1' });
      await first.client.ok('connection.open', { channelId: 'room-1', connectionId: 'r1', type: 'sfu', streams: {} });
      await first.client.ok('connection.state', { connectionId: 'r1', state: 'initializing' });
      first.client.terminate();
      await first.client.closed;
      const missed: ServerPush = { type: 'kicked', channelId: 'room-9' };
      await fake.push(gateway.gatewayId, { deliveries: [{ client: ref(id), push: missed }] });
      // Kept while detached, or delivered live if it arrives after the resume: the client gets it either way.
      const second = await open();
      const result = await second.ok('register', { token: token(id) });
      expect(result).toEqual(
        expect.objectContaining({
          resumed: true,
          channels: [{ channelId: 'room-1', claim: { id: 'room-1' } }],
          connections: [
            expect.objectContaining({ connectionId: 'r1', channelId: 'room-1', state: 'initializing', type: 'sfu' }),
          ],
        }),
      );
      expect(await second.push(0)).toEqual(missed);
      await second.ok('connection.state', { connectionId: 'r1', state: 'connecting' });
      expect(kinds(id).filter((k) => k === 'client.register' || k === 'client.unregister')).toEqual([
        'client.register',
      ]);
    });

    it('hands a client over to its new socket, closing the old one with 4009', async () => {
      const id = identity();
      const first = await registered(id);
      const second = await open();
      expect((await second.ok('register', { token: token(id) })).resumed).toBe(true);
      expect((await first.client.closed).code).toBe(SYNC_CLOSE_CODES.replaced);
      await fake.push(gateway.gatewayId, {
        deliveries: [{ client: ref(id), push: { type: 'kicked', channelId: 'x' } }],
      });
      expect(await second.push(0)).toEqual({ type: 'kicked', channelId: 'x' });
      expect(kinds(id)).toEqual(['client.register']);
    });

    it('drops what a replaced socket still had queued: a register left in its queue does not take the session back', async () => {
      const id = identity();
      const first = await registered(id);
      await first.client.ok('join', { channelId: 'room-1' });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let held!: () => void;
      const holding = new Promise<void>((r) => (held = r));
      fake.onEdge = async (report) => {
        if (report.kind === 'client.join' && report.channelId === 'room-2') {
          held();
          await gate;
        }
        return defaultAnswer(report);
      };
      void first.client.request('join', { channelId: 'room-2' });
      await holding;
      // Queued behind the join in progress, for the socket's next batch (on its own it would be AlreadyRegistered).
      void first.client.request('register', { token: token(id) });
      const second = await open();
      expect((await second.ok('register', { token: token(id) })).resumed).toBe(true);
      expect((await first.client.closed).code).toBe(SYNC_CLOSE_CODES.replaced);
      // The join's answer goes nowhere (its socket is closed); the register queued after it is
      // dropped and counted as such, not run.
      const dropped = () => metric(gateway, 'sync_requests_total', { type: 'register', outcome: 'Dropped' });
      const droppedBefore = await dropped();
      release();
      await waitFor(async () => (await dropped()) > droppedBefore, {
        description: "the replaced socket's queued register, dropped",
      });
      // The successor keeps the session: still open, and its requests act on it.
      expect(second.ws.readyState).toBe(second.ws.OPEN);
      expect(await second.ok('leave', { channelId: 'room-1' })).toEqual({ channelId: 'room-1' });
      expect(reportsOf(id).filter((r) => r.kind === 'client.register')).toHaveLength(1);
    });

    it('unregisters at once on an unregister request and closes normally', async () => {
      const { client, id } = await registered();
      await client.ok('join', { channelId: 'room-1' });
      await client.ok('connection.open', { channelId: 'room-1', connectionId: 'u1', type: 'sfu', streams: {} });
      expect(await client.ok('unregister')).toEqual({});
      expect((await client.closed).code).toBe(1000);
      expect(reportsOf(id).slice(-2)).toEqual([
        {
          kind: 'connection.close',
          client: ref(id),
          channelId: 'room-1',
          connectionId: 'u1',
          sessionId: registerSession(id),
        },
        {
          kind: 'client.unregister',
          client: ref(id),
          reason: 'left',
          gatewayId: gateway.gatewayId,
          sessionId: registerSession(id),
        },
      ]);
    });
  });

  describe('unregisters the registry did not take', () => {
    const unregisters = (id: Identity) =>
      reportsOf(id).filter((r) => r.kind === 'client.unregister') as Array<
        Extract<EdgeReport, { kind: 'client.unregister' }>
      >;
    /**
     * The registry refuses this client's unregisters (Unavailable, as while it or Redis restarts) while `refuse` says
     * so.
     */
    function refuseUnregisters(id: Identity, refuse: () => boolean) {
      fake.onEdge = (report) => {
        if (report.kind === 'client.unregister' && report.client.clientId === id.clientId && refuse())
          throw new WireFailure('Unavailable', 'the registry is restarting');
        return defaultAnswer(report);
      };
    }
    const times = (n: number) => () => n-- > 0;
    const pending = (gw: TestGateway) => metric(gw, 'sync_pending_unregisters');

    it('answers an unregister request at once and sends the unregister again until the registry takes it', async () => {
      const { client, id } = await registered(identity(), {}, retrying);
      await client.ok('join', { channelId: 'room-1' });
      await client.ok('connection.open', { channelId: 'room-1', connectionId: 't1', type: 'sfu', streams: {} });
      const okBefore = await metric(retrying, 'sync_unregister_attempts_total', { outcome: 'ok' });
      refuseUnregisters(id, times(2));
      expect(await client.ok('unregister')).toEqual({});
      expect((await client.closed).code).toBe(1000);
      await waitFor(() => unregisters(id).length >= 3, { description: 'the third unregister' });
      await waitFor(async () => (await pending(retrying)) === 0, { description: 'no unregister pending' });
      // The same unregister each time (this gateway, this session); the connection close went once:
      // the unregister closes what the registry still holds of the client.
      const expected = {
        kind: 'client.unregister',
        client: ref(id),
        reason: 'left',
        gatewayId: retrying.gatewayId,
        sessionId: registerSession(id),
      };
      expect(unregisters(id)).toEqual([expected, expected, expected]);
      expect(kinds(id).filter((k) => k === 'connection.close')).toHaveLength(1);
      expect(await metric(retrying, 'sync_unregister_attempts_total', { outcome: 'ok' })).toBe(okBefore + 1);
    });

    it('does the same for a client whose grace period ended', async () => {
      const { client, id } = await registered(identity(), {}, retrying);
      refuseUnregisters(id, times(1));
      client.terminate();
      await waitFor(() => unregisters(id).length >= 2, { description: 'the unregister sent again' });
      expect(unregisters(id).map((r) => [r.reason, r.sessionId])).toEqual([
        ['dropped', registerSession(id)],
        ['dropped', registerSession(id)],
      ]);
    });

    it('unregisters the old session of a client registering again before its new one, and never the new one', async () => {
      const id = identity();
      const first = await registered(id, {}, retrying);
      const oldSession = registerSession(id);
      let refusing = true;
      refuseUnregisters(id, () => refusing);
      await first.client.ok('unregister');
      expect(await pending(retrying)).toBeGreaterThan(0);
      // While the registry refuses the old session's unregister, the new register is refused too
      // (not reported: it would take over the old registration, its channels and connections).
      const second = await open(retrying);
      expect(await second.request('register', { token: token(id) })).toEqual(
        expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'Unavailable' }) }),
      );
      expect(reportsOf(id).filter((r) => r.kind === 'client.register')).toHaveLength(1);
      refusing = false;
      expect(await second.ok('register', { token: token(id) })).toEqual(expect.objectContaining({ resumed: false }));
      const newSession = registerSession(id);
      expect(newSession).not.toBe(oldSession);
      await waitFor(async () => (await pending(retrying)) === 0, { description: 'no unregister pending' });
      await second.ok('join', { channelId: 'room-1' });
      const order = reportsOf(id).map((r) =>
        r.kind === 'client.unregister' ? `unregister ${r.sessionId === oldSession ? 'old' : 'new'}` : r.kind,
      );
      expect(order.slice(order.lastIndexOf('unregister old'))).toEqual([
        'unregister old',
        'client.register',
        'client.join',
      ]);
      expect(order).not.toContain('unregister new');
    });

    it('keeps at most SYNC_MAX_PENDING_UNREGISTERS, forgetting the oldest (counted)', async () => {
      // No retry before the shutdown (which sends what is pending at once).
      const bounded = await startTestGateway(servers.natsUrl, ns, {
        SYNC_UNREGISTER_RETRY_MS: '60000',
        SYNC_MAX_PENDING_UNREGISTERS: '2',
        SHUTDOWN_TIMEOUT_MS: '5000',
      });
      let refusing = true;
      fake.onEdge = (report) => {
        if (report.kind === 'client.unregister' && refusing)
          throw new WireFailure('Unavailable', 'the registry is restarting');
        return defaultAnswer(report);
      };
      try {
        const ids: Identity[] = [];
        for (let i = 0; i < 3; i++) {
          const { client, id } = await registered(identity(), {}, bounded);
          ids.push(id);
          await client.ok('unregister');
        }
        expect(await pending(bounded)).toBe(2);
        expect(await metric(bounded, 'sync_unregisters_lost_total', { reason: 'over-limit' })).toBe(1);
        refusing = false;
        await bounded.close();
        // The first client's was forgotten; the two others went through.
        expect(ids.map((id) => unregisters(id).length)).toEqual([1, 2, 2]);
      } finally {
        refusing = false;
        await bounded.close().catch(() => undefined);
      }
    });

    it('at shutdown, sends them again until the registry takes them, within SHUTDOWN_TIMEOUT_MS', async () => {
      const leaving = await startTestGateway(servers.natsUrl, ns, {
        SYNC_UNREGISTER_RETRY_MS: '20',
        SHUTDOWN_TIMEOUT_MS: '5000',
      });
      const { client, id } = await registered(identity(), {}, leaving);
      refuseUnregisters(id, times(3));
      await leaving.close();
      expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.serviceRestart);
      expect(unregisters(id).map((r) => [r.reason, r.gatewayId, r.sessionId])).toEqual(
        Array.from({ length: 4 }, () => ['dropped', leaving.gatewayId, registerSession(id)]),
      );
    });

    it('at shutdown, leaves what the registry still refuses when SHUTDOWN_TIMEOUT_MS runs out (to its sweeper)', async () => {
      const leaving = await startTestGateway(servers.natsUrl, ns, {
        SYNC_UNREGISTER_RETRY_MS: '20',
        SHUTDOWN_TIMEOUT_MS: '1500',
      });
      const { client, id } = await registered(identity(), {}, leaving);
      refuseUnregisters(id, () => true);
      await leaving.close();
      expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.serviceRestart);
      expect(unregisters(id).length).toBeGreaterThan(1);
    });
  });

  describe('frames', () => {
    it('answers unreadable frames with an error frame and keeps the socket', async () => {
      const client = await open();
      client.sendRaw('{not json');
      client.sendRaw(Buffer.from([1, 2, 3]), true);
      await waitFor(() => client.unsolicitedErrors.length === 2);
      expect(client.unsolicitedErrors.map((e) => e.code)).toEqual(['InvalidFrame', 'InvalidFrame']);
      expect(await client.request('teleport', {}, 'x1')).toEqual({
        type: 'error',
        id: 'x1',
        error: expect.objectContaining({ code: 'InvalidFrame', details: [expect.objectContaining({ field: 'type' })] }),
      });
      expect(await client.request('register', { token: 5, extra: true }, 'x2')).toEqual({
        type: 'error',
        id: 'x2',
        error: expect.objectContaining({
          code: 'ValidationFailed',
          details: expect.arrayContaining([
            expect.objectContaining({ field: 'data.token' }),
            expect.objectContaining({ field: 'data.extra' }),
          ]),
        }),
      });
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
    });

    it('closes a socket that sends a frame over the maximum size with 1009', async () => {
      const client = await open(shortGrace);
      client.sendRaw(JSON.stringify({ id: 1, type: 'ping', data: { pad: 'x'.repeat(4096) } }));
      expect((await client.closed).code).toBe(1009);
    });

    it('refuses requests beyond the pending limit with TooManyRequests', async () => {
      const { client } = await registered(identity(), {}, shortGrace);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      fake.onEdge = async (report) => {
        if (report.kind === 'client.stats') await gate;
        return defaultAnswer(report);
      };
      const answers = [1, 2, 3].map(() => client.request('stats', { stats: {} }));
      const third = await answers[2];
      expect(third).toEqual(expect.objectContaining({ error: expect.objectContaining({ code: 'TooManyRequests' }) }));
      release();
      expect((await answers[0])!.type).toBe('result');
      expect((await answers[1])!.type).toBe('result');
    });

    /** Sends requests in one write (as a pipelining client does) and resolves with their answers. */
    function pipelined(client: TestSyncClient, requests: Array<[string, unknown]>) {
      const raw = (client.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
      raw.cork();
      const answers = requests.map(([type, data]) => client.request(type, data));
      raw.uncork();
      return Promise.all(answers);
    }

    it('reports pipelined requests together and answers them as if handled one after the other', async () => {
      const id = identity();
      const client = await open();
      const batchesBefore = fake.batches.length;
      const answers = await pipelined(client, [
        ['register', { token: token(id) }],
        ['join', { channelId: 'room-1' }],
        ['connection.open', { channelId: 'room-1', connectionId: 'p1', type: 'sfu', streams: {} }],
        ['connection.state', { connectionId: 'p1', state: 'initializing' }],
        ['connection.state', { connectionId: 'p1', state: 'connected' }],
        ['ping', {}],
      ]);
      expect(answers.map((a) => a.type)).toEqual(['result', 'result', 'result', 'result', 'error', 'result']);
      expect(answers[4]).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'InvalidTransition' }) }),
      );
      expect(kinds(id)).toEqual(['client.register', 'client.join', 'connection.open', 'connection.state']);
      // One batch request carried the four reports, in order, as one sequence.
      const batch = fake.batches
        .slice(batchesBefore)
        .find((b) => b.some((seq) => seq.some((r) => r.client.clientId === id.clientId)))!;
      expect(batch.find((seq) => seq[0]!.client.clientId === id.clientId)!.map((r) => r.kind)).toEqual([
        'client.register',
        'client.join',
        'connection.open',
        'connection.state',
      ]);
    });

    it('undoes what follows a refused report and handles it again, as a client waiting for each answer would see it', async () => {
      const { client, id } = await registered();
      fake.onEdge = (report) => {
        if (report.kind === 'client.join' && report.channelId === 'room-1')
          throw new WireFailure('Conflict', 'no room');
        return defaultAnswer(report);
      };
      const answers = await pipelined(client, [
        ['join', { channelId: 'room-1' }],
        ['connection.open', { channelId: 'room-1', connectionId: 'q1', type: 'sfu', streams: {} }],
        ['join', { channelId: 'room-2' }],
        ['connection.open', { channelId: 'room-2', connectionId: 'q2', type: 'sfu', streams: {} }],
        ['leave', { channelId: 'room-1' }],
      ]);
      expect(answers.map((a) => (a.type === 'error' ? a.error.code : 'ok'))).toEqual([
        'Conflict',
        'NotJoined',
        'ok',
        'ok',
        'NotJoined',
      ]);
      // The open in room-1 was never reported: the edge refused it once the join was refused.
      expect(
        reportsOf(id)
          .slice(1)
          .map((r) => [r.kind, (r as { channelId?: string }).channelId]),
      ).toEqual([
        ['client.join', 'room-1'],
        ['client.join', 'room-2'],
        ['connection.open', 'room-2'],
      ]);
      expect(await client.ok('connection.state', { connectionId: 'q2', state: 'initializing' })).toEqual({
        connectionId: 'q2',
        state: 'initializing',
      });
    });

    it('answers the reports the registry refused together (applied, events late) with their errors, and reports none again', async () => {
      const { client, id } = await registered();
      // As the registry answers a sequence it applied in one step when its events could not be published.
      fake.onSequence = (reports) =>
        reports.some((r) => r.kind === 'client.join')
          ? reports.map(() => ({ error: { code: 'Unavailable', message: 'events late' } }))
          : undefined;
      const answers = await pipelined(client, [
        ['join', { channelId: 'room-1' }],
        ['connection.open', { channelId: 'room-1', connectionId: 'u1', type: 'sfu', streams: {} }],
        ['connection.state', { connectionId: 'u1', state: 'initializing' }],
      ]);
      expect(answers.map((a) => (a.type === 'error' ? a.error.code : 'ok'))).toEqual([
        'Unavailable',
        'Unavailable',
        'Unavailable',
      ]);
      expect(
        reportsOf(id)
          .slice(1)
          .map((r) => r.kind),
      ).toEqual(['client.join', 'connection.open', 'connection.state']);
    });

    it('checks an unmute against the settings the open answers, even when pipelined behind it', async () => {
      const { client, id } = await registered();
      fake.onEdge = (report) =>
        report.kind === 'connection.open'
          ? { mediaServerId: null, settings: { ...DEFAULT_SETTINGS, audioUnmuteDisabled: true } }
          : defaultAnswer(report);
      const answers = await pipelined(client, [
        ['join', { channelId: 'room-1' }],
        [
          'connection.open',
          {
            channelId: 'room-1',
            connectionId: 'm1',
            type: 'peer',
            streams: { audio: { direction: 'sendrecv', muted: true } },
          },
        ],
        ['connection.update', { connectionId: 'm1', localAudioMuted: false }],
      ]);
      expect(answers.map((a) => (a.type === 'error' ? a.error.code : 'ok'))).toEqual(['ok', 'ok', 'UnmuteDisabled']);
      expect(kinds(id)).not.toContain('connection.update');
    });

    it('answers 404 to a WebSocket upgrade on another path', async () => {
      const ws = new WebSocket(gateway.syncUrl.replace('/sync', '/elsewhere'));
      const status = await new Promise<number>((resolve) =>
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)).once('error', () => resolve(-1)),
      );
      expect(status).toBe(404);
    });
  });

  describe('shutdown', () => {
    it('unregisters its clients, then closes their sockets with 1012, and refuses new sockets with 503 and Retry-After', async () => {
      const leaving = await startTestGateway(servers.natsUrl, ns);
      let silent: net.Socket | undefined;
      try {
        const { client, id } = await registered(identity(), {}, leaving);
        await client.ok('join', { channelId: 'room-1' });
        await client.ok('connection.open', { channelId: 'room-1', connectionId: 'z1', type: 'sfu', streams: {} });
        // A socket that never answers the closing handshake keeps the gateway waiting for it (up to
        // a second) with its HTTP server still listening.
        silent = await silentSocket(leaving.syncUrl);
        const closing = leaving.close();
        expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.serviceRestart);
        const late = new WebSocket(leaving.syncUrl);
        const refusal = await new Promise<{ status: number; retryAfter: unknown }>((resolve) =>
          late
            .once('unexpected-response', (_req, res) =>
              resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }),
            )
            .once('error', () => resolve({ status: -1, retryAfter: null })),
        );
        expect(refusal).toEqual({ status: 503, retryAfter: '1' });
        await closing;
        expect(reportsOf(id).slice(-2)).toEqual([
          {
            kind: 'connection.close',
            client: ref(id),
            channelId: 'room-1',
            connectionId: 'z1',
            sessionId: registerSession(id),
          },
          {
            kind: 'client.unregister',
            client: ref(id),
            reason: 'dropped',
            gatewayId: leaving.gatewayId,
            sessionId: registerSession(id),
          },
        ]);
        await waitFor(
          () => fake.heartbeats.filter((h) => h.server.id === leaving.gatewayId).at(-1)?.server.active === false,
          { description: 'the last heartbeat' },
        );
      } finally {
        silent?.destroy();
        await leaving.close().catch(() => undefined);
      }
    });
  });

  describe('heartbeats', () => {
    it('publishes gateway heartbeats with the replica id and its /sync address', async () => {
      await waitFor(() => fake.heartbeats.some((h) => h.server.id === gateway.gatewayId));
      const beat = fake.heartbeats.find((h) => h.server.id === gateway.gatewayId)!;
      expect(beat).toEqual({
        role: 'gateway',
        server: expect.objectContaining({
          id: gateway.gatewayId,
          active: true,
          addresses: [`${gateway.syncUrl}`],
          lastHeartbeat: expect.any(String),
        }),
      });
    });
  });
});
