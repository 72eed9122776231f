/** What each close code of the gateway means and what the client should do (the AsyncAPI `x-close-codes`). */
import { SYNC_CLOSE_CODES } from './sync-frames.js';

interface CloseMeaning {
  meaning: string;
  clientShould: string;
}

const MEANINGS = {
  normal: { meaning: 'Unregistered on request.', clientShould: 'Nothing.' },
  frameTooLarge: { meaning: 'A frame exceeded `SYNC_MAX_FRAME_BYTES`.', clientShould: 'Send smaller frames.' },
  serviceRestart: {
    meaning: 'The gateway replica is shutting down (its clients were unregistered first).',
    clientShould: 'Reconnect (any replica) and register again.',
  },
  tokenInvalid: {
    meaning: 'Token invalid (malformed, tampered, wrong secret, wrong type), at `register` or `join`.',
    clientShould: 'Get a new token (after a refused `join`: register within the grace period to resume).',
  },
  tokenExpired: {
    meaning: 'Token expired or not valid yet, at `register` or `join`.',
    clientShould: 'Get a new token (check the clock).',
  },
  applicationRefused: {
    meaning: 'Application unknown, disabled (or its organization disabled), or not the one asked for.',
    clientShould: 'Stop.',
  },
  registerTimeout: { meaning: 'No `register` within `SYNC_REGISTER_TIMEOUT_MS`.', clientShould: 'Register first.' },
  replaced: { meaning: 'Another socket registered the same client.', clientShould: 'Stop using this socket.' },
  unregistered: {
    meaning: 'Unregistered by the server (an `unregistered` push came first).',
    clientShould: 'Register again only if intended.',
  },
  slowConsumer: {
    meaning: "Slow consumer: the gateway's send buffer for the socket overflowed.",
    clientShould: 'Read faster; reconnect and register within the grace period to resume.',
  },
} satisfies Record<keyof typeof SYNC_CLOSE_CODES, CloseMeaning>;

/** By close code: its name in SYNC_CLOSE_CODES, what it means, what the client should do. */
export const SYNC_CLOSE_MEANINGS: Record<string, CloseMeaning & { name: string }> = Object.fromEntries(
  (Object.keys(MEANINGS) as Array<keyof typeof MEANINGS>).map((name) => [
    String(SYNC_CLOSE_CODES[name]),
    { name, ...MEANINGS[name] },
  ]),
);
