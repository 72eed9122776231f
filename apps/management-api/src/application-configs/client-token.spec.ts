import { createHmac } from 'node:crypto';
import { issueClientToken } from './client-token.js';

describe('issueClientToken', () => {
  const now = Date.UTC(2030, 0, 1, 12, 0, 0, 999);
  const token = issueClientToken({
    applicationId: 'my-app',
    sharedSecret: 'sécret',
    claims: { userId: 'u', deviceId: 'd', clientId: 'c', clientRoles: ['r'], channelClaims: [{ id: 'lobby', canKick: true }] },
    now,
    ttlSeconds: 120,
  });
  const [header, payload, signature] = token.split('.') as [string, string, string];

  it('writes header and payload as padded standard Base64 JSON', () => {
    expect(Buffer.from(header, 'base64').toString()).toBe('{"alg":"HS256","typ":"JWT"}');
    expect(header).toBe('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9');
    expect(JSON.parse(Buffer.from(payload, 'base64').toString())).toEqual({
      iat: Math.floor(now / 1000),
      exp: Math.floor(now / 1000) + 120,
      type: 'register',
      applicationId: 'my-app',
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
      clientRoles: ['r'],
      channels: [{ id: 'lobby', canKick: true }],
    });
    for (const part of [header, payload, signature]) expect(part.length % 4).toBe(0);
  });

  it('signs header.payload with HMAC-SHA256 keyed with the UTF-8 bytes of the secret', () => {
    expect(signature).toBe(createHmac('sha256', Buffer.from('sécret', 'utf8')).update(`${header}.${payload}`).digest('base64'));
  });
});
