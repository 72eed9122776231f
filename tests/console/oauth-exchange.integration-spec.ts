/** The console server's half of the OAuth2 sign-in against a real (test) issuer on loopback. */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '@switchboard/config';
import { TestOAuthIssuer } from '../../tools/testing/oauth-issuer.js';
import { buildConsole } from '../../apps/console/src/app.js';
import { loadConsoleConfig } from '../../apps/console/src/config.js';

const BASE = {
  LOG_LEVEL: 'error',
  CONSOLE_MANAGEMENT_URL: 'http://127.0.0.1:9',
  CONSOLE_GATEWAY_URL: 'http://127.0.0.1:9',
};

describe('console OAuth2 sign-in (server half)', () => {
  const issuer = new TestOAuthIssuer({ clientId: 'console', audience: 'switchboard', claims: { sub: 'dana' } });
  let app: FastifyInstance;

  beforeAll(async () => {
    await issuer.start();
    const config = loadConsoleConfig({ ...BASE, CONSOLE_OAUTH_ISSUER: issuer.url, CONSOLE_OAUTH_CLIENT_ID: 'console' });
    app = await buildConsole(config, process.cwd());
  });
  afterAll(async () => {
    await app.close();
    await issuer.close();
  });

  /** Goes to the authorization endpoint as a browser would; the query the issuer sends back. */
  async function authorize(challenge: string, state: string): Promise<string> {
    const target = new URL(`${issuer.url}/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: 'console',
      redirect_uri: 'http://console.test/',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
    }))
      target.searchParams.set(name, value);
    const answer = await fetch(target, { redirect: 'manual' });
    return new URL(answer.headers.get('location')!).search;
  }

  it("tells the page the issuer's authorization endpoint, from its metadata", async () => {
    const answer = await app.inject({ method: 'GET', url: '/api/console/oauth' });
    expect(answer.json()).toEqual({
      issuer: issuer.url,
      authorizationEndpoint: `${issuer.url}/authorize`,
      clientId: 'console',
      scope: '',
      resource: null,
    });
  });

  it('exchanges the code with the PKCE verifier; a wrong verifier or state is refused (400)', async () => {
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const exchange = (callback: string, state: string, codeVerifier: string) =>
      app.inject({
        method: 'POST',
        url: '/api/console/oauth/token',
        payload: { callback, state, codeVerifier, redirectUri: 'http://console.test/' },
      });
    const wrongVerifier = await exchange(await authorize(challenge, 'state-1'), 'state-1', 'w'.repeat(50));
    expect(wrongVerifier.statusCode).toBe(400);
    const wrongState = await exchange(await authorize(challenge, 'state-2'), 'another-state', verifier);
    expect(wrongState.statusCode).toBe(400);
    const good = await exchange(await authorize(challenge, 'state-3'), 'state-3', verifier);
    expect(good.statusCode).toBe(200);
    expect(good.json()).toEqual({ accessToken: issuer.issuedTokens.at(-1), expiresIn: 600 });
    expect((await exchange('', 'x', verifier)).statusCode).toBe(400);
  });

  it('answers 404 when no issuer is set up, and needs the issuer and client id together', async () => {
    const plain = await buildConsole(loadConsoleConfig(BASE), process.cwd());
    expect((await plain.inject({ method: 'GET', url: '/api/console/oauth' })).statusCode).toBe(404);
    await plain.close();
    expect(() => loadConsoleConfig({ ...BASE, CONSOLE_OAUTH_ISSUER: issuer.url })).toThrow(ConfigError);
  });
});
