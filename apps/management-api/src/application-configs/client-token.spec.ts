import { liveSwitchTokenVectors, liveSwitchVectorTimes } from '@switchboard/testing';
import { createHmac } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import type { ManagementConfig } from '../config.js';
import { ApplicationActionsService } from './application-actions.service.js';
import type { ApplicationConfigsService } from './application-configs.service.js';
import { issueClientToken } from './client-token.js';

describe('issueClientToken', () => {
  const now = Date.UTC(2030, 0, 1, 12, 0, 0, 999);
  const token = issueClientToken({
    applicationId: 'my-app',
    sharedSecret: 'sécret',
    claims: {
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
      clientRoles: ['r'],
      channelClaims: [{ id: 'lobby', canKick: true, disableSfu: false }],
    },
    now,
    ttlSeconds: 120,
  });
  const [header, payload, signature] = token.split('.') as [string, string, string];

  it('writes header and payload as standard Base64 JSON in LiveSwitch key order, only true flags', () => {
    expect(header).toBe('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9');
    const iat = Math.floor(now / 1000);
    expect(Buffer.from(payload, 'base64').toString()).toBe(
      `{"iat":${iat},"exp":${iat + 120},"type":"register","applicationId":"my-app","userId":"u","deviceId":"d","clientId":"c","clientRoles":["r"],"channels":[{"id":"lobby","action":"join","canKick":true}]}`,
    );
  });

  it('signs header.payload with HMAC-SHA256 keyed with the UTF-8 bytes of the secret, without padding', () => {
    const expected = createHmac('sha256', Buffer.from('sécret', 'utf8'))
      .update(`${header}.${payload}`)
      .digest('base64')
      .replace(/=+$/, '');
    expect(signature).toBe(expected.endsWith('A') ? expected.slice(0, -1) : expected);
  });

  it('leaves absent claims out', () => {
    const bare = issueClientToken({
      applicationId: 'my-app',
      sharedSecret: 's',
      claims: { userId: null, channelClaims: null },
      now,
      ttlSeconds: 60,
    });
    expect(JSON.parse(Buffer.from(bare.split('.')[1]!, 'base64').toString())).toEqual({
      iat: Math.floor(now / 1000),
      exp: Math.floor(now / 1000) + 60,
      type: 'register',
      applicationId: 'my-app',
    });
  });
});

describe('the Token action against the LiveSwitch SDK', () => {
  // Register tokens of the SDK's vectors the Token action can be asked for (no region; UTF-8 keyed).
  const vectors = liveSwitchTokenVectors().filter(
    (v) => v.type === 'register' && v.region === undefined && !v.sdkSurrogateKey,
  );
  const caller = { kind: 'api-key' } as unknown as Caller;
  const realNow = Date.now;
  afterEach(() => {
    Date.now = realNow;
  });

  it('covers stripped signatures too', () => {
    expect(vectors.filter((v) => v.signatureStripped).length).toBeGreaterThanOrEqual(5);
  });

  it.each(vectors.map((v, i) => [`${i} ${v.name}`, v] as const))(
    'answers %s byte for byte as the SDK wrote it',
    async (_, vector) => {
      const { iat, exp } = liveSwitchVectorTimes(vector);
      const configs = {
        find: async () => ({ applicationId: vector.applicationId, sharedSecret: vector.sharedSecret, disabled: false }),
      } as unknown as ApplicationConfigsService;
      const service = new ApplicationActionsService(
        configs,
        undefined as never,
        { clientTokenTtlSeconds: exp - iat } as ManagementConfig,
      );
      Date.now = () => vector.now;
      // Through JSON, as the request body arrives.
      expect(await service.token(caller, 'cfg', JSON.parse(JSON.stringify(vector.claims)))).toEqual({
        value: vector.token,
      });
    },
  );
});
