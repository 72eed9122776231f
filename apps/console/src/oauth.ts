/**
 * OAuth2 sign-in (authorization code with PKCE) for the web application, with oauth4webapi: the
 * page makes the verifier, challenge and state and goes to the issuer; this server reads the
 * issuer's metadata and exchanges the code (the page's CSP reaches only this origin). The token
 * goes back to the page, which keeps it in session storage and calls the APIs as that bearer.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import * as oauth from 'oauth4webapi';
import type { ConsoleConfig } from './config.js';

/** What the page needs to send the browser to the issuer. */
export interface OAuthSignIn {
  issuer: string;
  authorizationEndpoint: string;
  clientId: string;
  scope: string;
  resource: string | null;
}

interface TokenRequest {
  /** The query string the issuer sent the browser back with (`code`, `state`, maybe `iss`). */
  callback: string;
  state: string;
  codeVerifier: string;
  redirectUri: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** The issuer's metadata is read again after this long. */
const METADATA_TTL_MS = 5 * 60_000;

const TITLES: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 502: 'Bad Gateway' };

function problem(reply: FastifyReply, status: number, detail: string) {
  return reply
    .code(status)
    .header('content-type', 'application/problem+json')
    .send({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail });
}

export function registerOAuthRoutes(app: FastifyInstance, config: ConsoleConfig): void {
  const issuerUrl = config.oauthIssuer ? new URL(config.oauthIssuer) : undefined;
  if (!issuerUrl || !config.oauthClientId) {
    app.get('/api/console/oauth', (_request, reply) => problem(reply, 404, 'OAuth2 sign-in is not set up'));
    return;
  }
  const client: oauth.Client = { client_id: config.oauthClientId };
  // Plain http only for an issuer on this machine (tests, development).
  const insecure = issuerUrl.protocol === 'http:' && LOOPBACK_HOSTS.has(issuerUrl.hostname);
  const options = () => ({
    [oauth.allowInsecureRequests]: insecure,
    signal: AbortSignal.timeout(config.upstreamTimeoutMs),
  });
  let metadata: { server: Promise<oauth.AuthorizationServer>; until: number } | undefined;
  const server = () => {
    if (!metadata || metadata.until < Date.now()) {
      const read = oauth
        .discoveryRequest(issuerUrl, { ...options(), algorithm: 'oauth2' })
        .then((response) => oauth.processDiscoveryResponse(issuerUrl, response));
      metadata = { server: read, until: Date.now() + METADATA_TTL_MS };
      read.catch(() => (metadata = undefined));
    }
    return metadata.server;
  };

  app.get('/api/console/oauth', async (request, reply) => {
    let as: oauth.AuthorizationServer;
    try {
      as = await server();
    } catch (error) {
      request.log.warn({ err: error }, 'the OAuth2 issuer metadata could not be read');
      return problem(reply, 502, 'The OAuth2 issuer cannot be reached');
    }
    if (!as.authorization_endpoint) return problem(reply, 502, 'The OAuth2 issuer has no authorization endpoint');
    const answer: OAuthSignIn = {
      issuer: as.issuer,
      authorizationEndpoint: as.authorization_endpoint,
      clientId: client.client_id,
      scope: config.oauthScope,
      resource: config.oauthResource ?? null,
    };
    return answer;
  });

  app.post<{ Body: TokenRequest }>('/api/console/oauth/token', async (request, reply) => {
    const body = request.body;
    if (
      !body ||
      ['callback', 'state', 'codeVerifier', 'redirectUri'].some(
        (f) => typeof body[f as keyof TokenRequest] !== 'string',
      )
    )
      return problem(reply, 400, 'callback, state, codeVerifier and redirectUri are required');
    try {
      const as = await server();
      const parameters = oauth.validateAuthResponse(as, client, new URLSearchParams(body.callback), body.state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        parameters,
        body.redirectUri,
        body.codeVerifier,
        options(),
      );
      const token = await oauth.processAuthorizationCodeResponse(as, client, response);
      return { accessToken: token.access_token, expiresIn: token.expires_in ?? null };
    } catch (error) {
      const refused =
        error instanceof oauth.AuthorizationResponseError ||
        error instanceof oauth.ResponseBodyError ||
        error instanceof oauth.OperationProcessingError;
      request.log.warn({ err: error }, 'OAuth2 sign-in refused');
      return problem(
        reply,
        refused ? 400 : 502,
        refused ? `The issuer refused the sign-in: ${(error as Error).message}` : 'The OAuth2 issuer cannot be reached',
      );
    }
  });
}
