/**
 * OAuth2 sign-in, the page's half (oauth4webapi): PKCE verifier, S256 challenge and state made here
 * and kept in session storage across the redirect; the console's server reads the issuer's metadata
 * and exchanges the code. The code leaves the address bar before anything else happens.
 */
import * as oauth from 'oauth4webapi';
import { ApiError } from './api';

const PENDING_STORAGE = 'switchboard.console.oauthPending';

export interface OAuthSignIn {
  issuer: string;
  authorizationEndpoint: string;
  clientId: string;
  scope: string;
  resource: string | null;
}

const redirectUri = () => `${window.location.origin}/`;

/** The issuer to sign in with, or null when the console has none set up. */
export async function oauthSetup(): Promise<OAuthSignIn | null> {
  const response = await fetch('/api/console/oauth', { headers: { accept: 'application/json' } });
  return response.ok ? ((await response.json()) as OAuthSignIn) : null;
}

/** Sends the browser to the issuer's authorization endpoint (authorization code, PKCE S256, state). */
export async function startOAuth(setup: OAuthSignIn): Promise<void> {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const target = new URL(setup.authorizationEndpoint);
  target.searchParams.set('response_type', 'code');
  target.searchParams.set('client_id', setup.clientId);
  target.searchParams.set('redirect_uri', redirectUri());
  target.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  target.searchParams.set('code_challenge_method', 'S256');
  target.searchParams.set('state', state);
  if (setup.scope) target.searchParams.set('scope', setup.scope);
  if (setup.resource) target.searchParams.set('resource', setup.resource);
  sessionStorage.setItem(PENDING_STORAGE, JSON.stringify({ codeVerifier, state }));
  window.location.assign(target.toString());
}

/**
 * Back from the issuer (`?code=…&state=…` or `?error=…`): the access token, after the console's
 * server checked the answer and exchanged the code; null when this page load is no such return.
 */
export async function finishOAuth(): Promise<string | null> {
  const callback = new URLSearchParams(window.location.search);
  if (!callback.has('code') && !callback.has('error')) return null;
  window.history.replaceState(null, '', window.location.pathname);
  const pending = sessionStorage.getItem(PENDING_STORAGE);
  sessionStorage.removeItem(PENDING_STORAGE);
  if (pending === null) throw new Error('No sign-in was started from this tab.');
  const { codeVerifier, state } = JSON.parse(pending) as { codeVerifier: string; state: string };
  const response = await fetch('/api/console/oauth/token', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ callback: callback.toString(), state, codeVerifier, redirectUri: redirectUri() }),
  });
  const answer = (await response.json()) as { accessToken?: string; detail?: string };
  if (!response.ok || !answer.accessToken)
    throw new ApiError(response.status, answer.detail ?? `HTTP ${response.status}`);
  return answer.accessToken;
}
