/**
 * A minimal OAuth2 issuer on loopback for tests: authorization server metadata (RFC 8414), an
 * authorization endpoint that signs its one user in at once (no login page) and redirects back with
 * a code, a token endpoint that checks the PKCE S256 verifier, and the JWKS of its RS256 tokens.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type KeyObject } from 'jose';

export interface TestIssuerOptions {
  clientId: string;
  audience: string;
  /** Claims of the signed-in user's access tokens (`sub`, the organization claim, `scope`). */
  claims: Record<string, unknown>;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string | null;
}

export class TestOAuthIssuer {
  url!: string;
  /** The query of every authorization request, and every token request's form, as received. */
  readonly authorizationRequests: URLSearchParams[] = [];
  readonly tokenRequests: URLSearchParams[] = [];
  readonly issuedTokens: string[] = [];
  private readonly codes = new Map<string, PendingCode>();
  private privateKey!: CryptoKey | KeyObject;
  private jwk!: JWK;
  private readonly server = http.createServer((request, response) => {
    void this.handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });

  /** `options.claims` may change between sign-ins (the next token carries them). */
  constructor(readonly options: TestIssuerOptions) {}

  async start(): Promise<void> {
    const pair = await generateKeyPair('RS256');
    this.privateKey = pair.privateKey;
    this.jwk = { ...(await exportJWK(pair.publicKey)), kid: 'issuer-key', alg: 'RS256', use: 'sig' };
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get jwksUrl(): string {
    return `${this.url}/jwks.json`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const json = (status: number, body: unknown): void =>
      void response
        .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(body));
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        jwks_uri: this.jwksUrl,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (url.pathname === '/jwks.json') return json(200, { keys: [this.jwk] });
    if (url.pathname === '/authorize' && request.method === 'GET') return this.authorize(url.searchParams, response);
    if (url.pathname === '/token' && request.method === 'POST') {
      const form = new URLSearchParams(await readBody(request));
      this.tokenRequests.push(form);
      const answer = await this.token(form);
      return json(answer.status, answer.body);
    }
    response.writeHead(404).end();
  }

  /** Signs the user in at once: a redirect back with a one-time code bound to the PKCE challenge. */
  private authorize(query: URLSearchParams, response: http.ServerResponse): void {
    this.authorizationRequests.push(query);
    const redirectUri = query.get('redirect_uri');
    const challenge = query.get('code_challenge');
    if (
      query.get('client_id') !== this.options.clientId ||
      !redirectUri ||
      query.get('response_type') !== 'code' ||
      query.get('code_challenge_method') !== 'S256' ||
      !challenge
    ) {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('invalid authorization request');
      return;
    }
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, { clientId: this.options.clientId, redirectUri, challenge, scope: query.get('scope') });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    const state = query.get('state');
    if (state !== null) back.searchParams.set('state', state);
    response.writeHead(302, { location: back.toString() }).end();
  }

  private async token(form: URLSearchParams): Promise<{ status: number; body: unknown }> {
    const refuse = (error: string) => ({ status: 400, body: { error } });
    const code = form.get('code') ?? '';
    const pending = this.codes.get(code);
    this.codes.delete(code);
    if (form.get('grant_type') !== 'authorization_code' || !pending) return refuse('invalid_grant');
    if (form.get('client_id') !== pending.clientId) return refuse('invalid_client');
    if (form.get('redirect_uri') !== pending.redirectUri) return refuse('invalid_grant');
    const verifier = form.get('code_verifier') ?? '';
    if (createHash('sha256').update(verifier).digest('base64url') !== pending.challenge) return refuse('invalid_grant');
    const accessToken = await new SignJWT({ ...this.options.claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'issuer-key' })
      .setIssuer(this.url)
      .setAudience(this.options.audience)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(this.privateKey);
    this.issuedTokens.push(accessToken);
    return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: 600 } };
  }
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
