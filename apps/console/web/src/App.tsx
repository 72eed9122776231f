import { useEffect, useState } from 'react';
import { api, ApiError, storeCredential, storedCredential, type Credential } from './api';
import { finishOAuth, oauthSetup, startOAuth, type OAuthSignIn } from './oauth';
import { ChangeLogPage } from './pages/ChangeLog';
import { LivePage } from './pages/Live';
import { MediaServersPage } from './pages/MediaServers';
import { ParkedPage } from './pages/Parked';
import { OrganizationsPage } from './pages/Organizations';
import { RecordingsPage } from './pages/Recordings';
import { UsagePage } from './pages/Usage';
import { WebhookConfigPage } from './pages/WebhookConfig';
import { WebhooksPage } from './pages/Webhooks';

type Page =
  'live' | 'recordings' | 'webhooks' | 'webhook-config' | 'changes' | 'usage' | 'media' | 'parked' | 'organizations';
interface Session {
  credential: Credential;
  /** May call interface A's operator routes (media servers); an operator OAuth2 scope gives this much. */
  operatorA: boolean;
  /** May call interface B's operator routes (parked events, organizations): operator API keys only. */
  operatorB: boolean;
}

/** true when `path` answers, false on a 403: what the credential may do is found out by asking. */
async function allowed(path: string, credential: Credential): Promise<boolean> {
  try {
    await api('GET', path, undefined, credential);
    return true;
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 403) return false;
    throw failure;
  }
}

/** Signs the credential in: a read of interface A proves it, operator-only reads tell what it may do. */
async function signIn(credential: Credential): Promise<Session> {
  await api('GET', '/api/a/applications', undefined, credential);
  const [operatorA, operatorB] = await Promise.all([
    allowed('/api/a/mediaservers', credential),
    allowed('/api/b/ParkedEvents?$top=1', credential),
  ]);
  return { credential, operatorA, operatorB };
}

function failureText(failure: unknown, unauthorized: string): string {
  if (failure instanceof ApiError && failure.status === 401) return unauthorized;
  return failure instanceof Error ? failure.message : String(failure);
}

function SignIn({
  onSignedIn,
  oauth,
  oauthError,
}: {
  onSignedIn: (session: Session) => void;
  oauth: OAuthSignIn | null;
  oauthError?: string;
}) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  return (
    <main>
      <h1>Switchboard console</h1>
      <form
        className="sign-in"
        onSubmit={(event) => {
          event.preventDefault();
          signIn({ apiKey: key.trim() }).then(onSignedIn, (failure: unknown) =>
            setError(failureText(failure, 'This API key is not valid.')),
          );
        }}
      >
        <label>
          API key
          <input
            type="password"
            autoComplete="off"
            required
            value={key}
            onChange={(event) => setKey(event.target.value)}
          />
        </label>
        <button type="submit">Sign in</button>
        {error && <p role="alert">{error}</p>}
      </form>
      {oauth && (
        <p className="sign-in">
          <button type="button" onClick={() => void startOAuth(oauth)}>
            Sign in with {oauth.issuer}
          </button>
        </p>
      )}
      {oauthError && <p role="alert">{oauthError}</p>}
    </main>
  );
}

/** The session of this tab: back from the issuer (a new token), or the credential kept in session storage. */
async function restore(): Promise<Session | undefined> {
  const token = await finishOAuth();
  if (token !== null) storeCredential({ bearer: token });
  const credential = storedCredential();
  if (credential === null) return undefined;
  try {
    return await signIn(credential);
  } catch (failure) {
    storeCredential(null);
    throw failure;
  }
}

export function App() {
  const [session, setSession] = useState<Session>();
  const [page, setPage] = useState<Page>('live');
  const [restoring, setRestoring] = useState(true);
  const [oauth, setOAuth] = useState<OAuthSignIn | null>(null);
  const [oauthError, setOAuthError] = useState<string>();
  useEffect(() => {
    oauthSetup().then(setOAuth, () => setOAuth(null));
    restore()
      .then(setSession, (failure: unknown) => setOAuthError(failureText(failure, 'The sign-in was refused.')))
      .finally(() => setRestoring(false));
  }, []);
  if (restoring) return <main aria-busy="true">Signing in…</main>;
  if (!session) {
    return (
      <SignIn
        oauth={oauth}
        oauthError={oauthError}
        onSignedIn={(signed) => {
          storeCredential(signed.credential);
          setSession(signed);
        }}
      />
    );
  }
  const oauthSession = 'bearer' in session.credential;
  const pages: Array<[Page, string]> = [
    ['live', 'Live'],
    ['recordings', 'Recordings'],
    ['webhooks', 'Webhook deliveries'],
    ['webhook-config', 'Webhooks'],
    ['changes', 'Change log'],
    ['usage', 'Usage'],
    ...(session.operatorA ? ([['media', 'Media servers']] as Array<[Page, string]>) : []),
    ...(session.operatorB
      ? ([
          ['parked', 'Parked events'],
          ['organizations', 'Organizations'],
        ] as Array<[Page, string]>)
      : []),
  ];
  return (
    <>
      <header>
        <h1>Switchboard console</h1>
        <nav aria-label="Pages">
          {pages.map(([id, label]) => (
            <button key={id} type="button" aria-current={page === id ? 'page' : undefined} onClick={() => setPage(id)}>
              {label}
            </button>
          ))}
        </nav>
        <span className="who">
          {session.operatorA ? 'Operator' : 'Organization'} {oauthSession ? 'token (OAuth2)' : 'key'}
        </span>
        <button
          type="button"
          onClick={() => {
            storeCredential(null);
            setSession(undefined);
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {page === 'live' && <LivePage />}
        {page === 'recordings' && <RecordingsPage />}
        {page === 'webhooks' && <WebhooksPage />}
        {page === 'webhook-config' && <WebhookConfigPage />}
        {page === 'changes' && <ChangeLogPage />}
        {page === 'usage' && <UsagePage />}
        {page === 'media' && session.operatorA && <MediaServersPage />}
        {page === 'parked' && session.operatorB && <ParkedPage />}
        {page === 'organizations' && session.operatorB && <OrganizationsPage />}
      </main>
    </>
  );
}
