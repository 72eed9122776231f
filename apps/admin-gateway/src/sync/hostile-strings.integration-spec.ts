/**
 * /sync frames carrying text PostgreSQL and UTF-8 cannot hold (U+0000, lone surrogates): refused
 * with the protocol's error frame naming the field (`data.userAlias`), the socket kept open, and
 * nothing reported to the runtime registry.
 */
import { encodeClientToken, type ClientTokenPayload } from '@switchboard/contracts';
import { testNamespace, testServers } from '@switchboard/testing';
import WebSocket from 'ws';
import { startFakeRuntime, type FakeRuntime } from '../testing/fake-runtime.testing.js';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { identity, TestSyncClient, type Identity } from '../testing/sync-client.testing.js';

const APP = 'app-hostile';
const SECRET = 'hostile-secret';
const NUL = 'must not contain U+0000 (NUL)';
const SURROGATE = 'must be well-formed Unicode (no lone surrogate)';

function token(id: Identity): string {
  const iat = Math.floor(Date.now() / 1000);
  const payload: ClientTokenPayload = {
    iat,
    exp: iat + 600,
    type: 'register',
    applicationId: APP,
    ...id,
    clientRoles: ['participant'],
    channels: [{ id: 'room-1' }],
  };
  return encodeClientToken(payload, SECRET, 'base64');
}

describe('/sync refuses unstorable text', () => {
  const servers = testServers();
  const ns = testNamespace('gw_hostile');
  let fake: FakeRuntime;
  let gateway: TestGateway;
  const clients: TestSyncClient[] = [];

  async function open(): Promise<TestSyncClient> {
    const client = await TestSyncClient.open(gateway.syncUrl);
    clients.push(client);
    return client;
  }

  const refusedWith = (code: string, field: string, message: string) => ({
    type: 'error',
    id: expect.anything(),
    error: expect.objectContaining({ code, details: [{ field, message }] }),
  });

  beforeAll(async () => {
    fake = await startFakeRuntime(servers.natsUrl, ns);
    fake.applications.set(APP, {
      applicationId: APP,
      applicationConfigId: 'cfg-h',
      organizationId: 'org-h',
      sharedSecret: SECRET,
      disabled: false,
    });
    gateway = await startTestGateway(servers.natsUrl, ns);
  });

  afterEach(() => {
    for (const c of clients.splice(0)) c.terminate();
  });

  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('refuses a register whose alias holds a NUL or a lone surrogate, reporting nothing', async () => {
    const id = identity();
    const client = await open();
    expect(await client.request('register', { token: token(id), userAlias: 'a\u0000b' })).toEqual(
      refusedWith('ValidationFailed', 'data.userAlias', NUL),
    );
    expect(await client.request('register', { token: token(id), deviceAlias: '\ud800' })).toEqual(
      refusedWith('ValidationFailed', 'data.deviceAlias', SURROGATE),
    );
    expect(fake.reportsOf(id.clientId)).toEqual([]);
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('refuses bad text in the requests of a registered client, at any depth, reporting none of them', async () => {
    const id = identity();
    const client = await open();
    await client.ok('register', { token: token(id), userAlias: 'Ann \u{1F44B}' });
    const before = fake.reportsOf(id.clientId).length;
    expect(await client.request('client.update', { tag: 'x\udc00' })).toEqual(
      refusedWith('ValidationFailed', 'data.tag', SURROGATE),
    );
    expect(await client.request('message', { channelId: 'room-1', message: 'x\u0000y' })).toEqual(
      refusedWith('ValidationFailed', 'data.message', NUL),
    );
    expect(await client.request('message', { channelId: 'room-1', message: 'hi', to: { userId: 'u\ud800' } })).toEqual(
      refusedWith('ValidationFailed', 'data.to.userId', SURROGATE),
    );
    expect(await client.request('stats', { stats: { rtt: { label: 'a\u0000' } } })).toEqual(
      refusedWith('ValidationFailed', 'data.stats.rtt.label', NUL),
    );
    expect(await client.request('stats', { stats: { 'k\u0000': 1 } })).toEqual(
      refusedWith('ValidationFailed', 'data.stats', 'has a field name containing U+0000 (NUL)'),
    );
    expect(fake.reportsOf(id.clientId)).toHaveLength(before);
    // Astral characters are text like any other.
    expect((await client.request('client.update', { tag: 'tag \u{1F600}' })).type).toBe('result');
    expect(fake.reportsOf(id.clientId).at(-1)).toEqual(
      expect.objectContaining({ kind: 'client.update', tag: 'tag \u{1F600}' }),
    );
  });

  it('refuses a frame id with a NUL as an invalid frame (the id echoed so the client can match it)', async () => {
    const client = await open();
    expect(await client.request('ping', {}, 'id\u0000')).toEqual({
      type: 'error',
      id: 'id\u0000',
      error: expect.objectContaining({ code: 'InvalidFrame', details: [{ field: 'id', message: NUL }] }),
    });
  });
});
