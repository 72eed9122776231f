import Janode from 'janode';
import { within } from './janus-client.js';

export interface JanusAdminOptions {
  /** ws:// URL of the Janus Admin API. */
  url: string;
  /** admin_secret of janus.jcfg (janode sends `apisecret` as admin_secret on an admin connection). */
  secret: string;
  requestTimeoutMs: number;
}

/**
 * Asks the Janus Admin API for its session list with the configured secret: resolves to the number
 * of sessions, rejects when the Admin API cannot be reached or refuses the secret. The later steps
 * read handle statistics there, so a wrong secret is a configuration error worth seeing at once.
 */
export async function checkJanusAdmin(options: JanusAdminOptions): Promise<number> {
  const connection = await within(
    Janode.connect({ is_admin: true, address: { url: options.url, apisecret: options.secret }, max_retries: 0 }),
    options.requestTimeoutMs,
    'the Janus Admin API did not accept the connection in time',
  );
  try {
    const answer = await within(
      connection.listSessions(),
      options.requestTimeoutMs,
      'the Janus Admin API did not answer in time',
    );
    return answer.sessions.length;
  } finally {
    // An unclosed janode connection keeps Node alive.
    await connection.close().catch(() => undefined);
  }
}
