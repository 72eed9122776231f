import { useEffect, useState } from 'react';
import { api, ApiError, storedKey, storeKey } from './api';
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
  key: string;
  /** The credential may call the operator-only routes (found out by one: 403 otherwise). */
  operator: boolean;
}

/** Signs the key in: a read of interface A proves it, an operator-only read tells what it may do. */
async function signIn(key: string): Promise<Session> {
  await api('GET', '/api/a/applications', undefined, key);
  try {
    await api('GET', '/api/b/ParkedEvents?$top=1', undefined, key);
    return { key, operator: true };
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 403) return { key, operator: false };
    throw failure;
  }
}

function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  return (
    <main>
      <h1>Switchboard console</h1>
      <form
        className="sign-in"
        onSubmit={(event) => {
          event.preventDefault();
          signIn(key.trim()).then(onSignedIn, (failure: unknown) =>
            setError(
              failure instanceof ApiError && failure.status === 401 ? 'This API key is not valid.' : String(failure),
            ),
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
    </main>
  );
}

export function App() {
  const [session, setSession] = useState<Session>();
  const [page, setPage] = useState<Page>('live');
  const [restoring, setRestoring] = useState(storedKey() !== null);
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    signIn(key)
      .then(setSession, () => storeKey(null))
      .finally(() => setRestoring(false));
  }, []);
  if (restoring) return <main aria-busy="true">Signing in…</main>;
  if (!session) {
    return (
      <SignIn
        onSignedIn={(signed) => {
          storeKey(signed.key);
          setSession(signed);
        }}
      />
    );
  }
  const pages: Array<[Page, string]> = [
    ['live', 'Live'],
    ['recordings', 'Recordings'],
    ['webhooks', 'Webhook deliveries'],
    ['webhook-config', 'Webhooks'],
    ['changes', 'Change log'],
    ['usage', 'Usage'],
    ...(session.operator
      ? ([
          ['media', 'Media servers'],
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
        <span className="who">{session.operator ? 'Operator key' : 'Organization key'}</span>
        <button
          type="button"
          onClick={() => {
            storeKey(null);
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
        {page === 'media' && session.operator && <MediaServersPage />}
        {page === 'parked' && session.operator && <ParkedPage />}
        {page === 'organizations' && session.operator && <OrganizationsPage />}
      </main>
    </>
  );
}
