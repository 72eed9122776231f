import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type KeyObject } from 'jose';
import { BearerVerifier, bearerToken } from './bearer.js';

describe('bearerToken', () => {
  it('takes the token of the Bearer scheme, whatever the case of the scheme name', () => {
    for (const header of [
      'Bearer abc.def.ghi',
      'bearer abc.def.ghi',
      'BEARER abc.def.ghi',
      'bEaReR  abc.def.ghi ',
      'Bearer\tabc.def.ghi',
    ]) {
      expect(bearerToken(header)).toBe('abc.def.ghi');
    }
    expect(bearerToken(['bearer first', 'Bearer second'])).toBe('first');
  });

  it('is undefined without the header or for another scheme', () => {
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearerabc', 'Bearer', 'Token abc', []])
      expect(bearerToken(header)).toBeUndefined();
  });
});

describe('BearerVerifier', () => {
  let jwks: http.Server;
  let key: CryptoKey | KeyObject;
  let verifier: BearerVerifier;
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer('https://issuer.test')
      .setAudience('sb')
      .setSubject('user-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    verifier = new BearerVerifier({
      oauthIssuer: 'https://issuer.test',
      oauthAudience: 'sb',
      oauthJwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
      oauthOperatorScope: 'switchboard:operator',
      oauthOrganizationClaim: 'org_id',
    });
  });

  afterAll(async () => {
    await new Promise((r) => jwks.close(r));
  });

  it('scopes an upper-case organization UUID as the stored, lower-cased id; other claims as they are', async () => {
    const org = '5C1D972D-A6A4-4EB0-9EEF-DD9697D15678';
    expect(await verifier.verify(await sign({ org_id: org }))).toEqual({
      organizationId: org.toLowerCase(),
      operator: false,
      principal: 'user-1',
    });
    expect((await verifier.verify(await sign({ org_id: 'Not-A-Uuid' }))).organizationId).toBe('Not-A-Uuid');
  });
});
