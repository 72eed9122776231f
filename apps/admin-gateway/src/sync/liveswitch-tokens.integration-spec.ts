/**
 * /sync end to end with tokens written by LiveSwitch's own SDK (the contracts fixture): every
 * register token registers, every join token joins (stripped signatures and the SDK's key bytes
 * included), tampered ones are refused with TokenInvalid and the socket closed 4001.
 */
import { encodeLiveSwitchClientToken, SYNC_CLOSE_CODES } from '@switchboard/contracts';
import { liveSwitchTokenVectors, liveSwitchVectorTimes, testNamespace, testServers } from '@switchboard/testing';
import { startFakeRuntime, type FakeRuntime } from '../testing/fake-runtime.testing.js';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { TestSyncClient } from '../testing/sync-client.testing.js';

const vectors = liveSwitchTokenVectors();
const payloadOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64').toString('utf8')) as Record<string, any>;

describe('/sync with LiveSwitch SDK tokens', () => {
  const servers = testServers();
  const ns = testNamespace('gw_lstok');
  const realNow = Date.now;
  let fake: FakeRuntime;
  let gateway: TestGateway;
  const clients: TestSyncClient[] = [];

  async function open(): Promise<TestSyncClient> {
    const client = await TestSyncClient.open(gateway.syncUrl);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    // The vectors were written at fixed times: this process's clock runs from just after them.
    const offset = vectors[0]!.now + 2000 - realNow();
    Date.now = () => realNow() + offset;
    fake = await startFakeRuntime(servers.natsUrl, ns);
    for (const v of vectors) {
      fake.applications.set(v.applicationId, {
        applicationId: v.applicationId,
        applicationConfigId: `cfg-${v.applicationId}`,
        organizationId: 'org-ls',
        sharedSecret: v.sharedSecret,
        disabled: false,
      });
    }
    gateway = await startTestGateway(servers.natsUrl, ns, { SYNC_GRACE_PERIOD_MS: '100' });
  });

  afterEach(() => {
    for (const c of clients.splice(0)) c.terminate();
  });

  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    Date.now = realNow;
  });

  it('registers with every register token of the SDK', async () => {
    const registerVectors = vectors.filter((v) => v.type === 'register');
    expect(registerVectors.filter((v) => v.signatureStripped).length).toBeGreaterThanOrEqual(5);
    for (const vector of registerVectors) {
      const client = await open();
      const result = await client.ok('register', { token: vector.token, applicationId: vector.applicationId });
      const payload = payloadOf(vector.token);
      expect(result).toEqual(
        expect.objectContaining({
          applicationId: vector.applicationId,
          userId: payload.userId ?? expect.any(String),
          clientId: payload.clientId ?? expect.any(String),
        }),
      );
      client.terminate();
    }
  });

  it('joins with every join token of the SDK', async () => {
    for (const vector of vectors.filter((v) => v.type === 'join')) {
      const { userId, deviceId, clientId, channelClaims } = vector.claims;
      const registerToken = encodeLiveSwitchClientToken(
        {
          type: 'register',
          ...liveSwitchVectorTimes(vector),
          applicationId: vector.applicationId,
          userId,
          deviceId,
          clientId,
        },
        vector.sharedSecret,
      );
      const client = await open();
      await client.ok('register', { token: registerToken });
      const result = await client.ok('join', { channelId: channelClaims![0]!.id, token: vector.token });
      expect(result).toEqual(
        expect.objectContaining({ channel: expect.objectContaining({ id: channelClaims![0]!.id }) }),
      );
      client.terminate();
    }
  });

  it('refuses tampered SDK tokens with TokenInvalid and closes 4001', async () => {
    const stripped = vectors.find((v) => v.type === 'register' && v.signatureStripped)!;
    const [header, payload, signature] = stripped.token.split('.') as [string, string, string];
    const changedPayload = Buffer.from(
      Buffer.from(payload, 'base64').toString('utf8').replace('"type"', '"nbf":1,"type"'),
      'utf8',
    ).toString('base64');
    for (const token of [
      `${header}.${changedPayload}.${signature}`,
      `${header}.${payload}.${signature.slice(0, 7)}${signature[7] === 'Q' ? 'R' : 'Q'}${signature.slice(8)}`,
      `${header}.${payload}.${signature.slice(0, 3)}${signature.slice(4)}`,
      `${header}.${payload}.${signature}AA`,
    ]) {
      const client = await open();
      const answer = await client.request('register', { token });
      expect(answer).toEqual({
        type: 'error',
        id: expect.anything(),
        error: expect.objectContaining({ code: 'TokenInvalid' }),
      });
      expect((await client.closed).code).toBe(SYNC_CLOSE_CODES.tokenInvalid);
    }
  });
});
