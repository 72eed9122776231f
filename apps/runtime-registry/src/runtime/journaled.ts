import type { ClientRef, ConnectionState, EdgeReport, KickTarget, UpdateTarget } from '@switchboard/contracts';
import type { ConnectionIds } from '../store/store-types.js';
import type { EventCause, EventOwner } from '../model/events.js';

/**
 * The context of an operation journal entry (events/journal.ts): what a replica needs, with the
 * script's answer, to build the operation's events again exactly as the replica that applied it did.
 * Only operations whose retry would not emit them (it changes nothing the second time) are journaled.
 */
export type JournalContext =
  /** Client edge reports applied by one script run (`together`: by `rtSequence`, several of them). */
  | { kind: 'edge'; reports: EdgeReport[]; together: boolean }
  | { kind: 'leave'; report: Extract<EdgeReport, { kind: 'client.leave' }> }
  | { kind: 'close'; report: Extract<EdgeReport, { kind: 'connection.close' }> }
  /** An unregister (a report, or the housekeeping pass dropping the clients of a gone gateway). */
  | { kind: 'unregister'; client: ClientRef; cause: EventCause; onlyIfGateway?: string; onlyIfSession?: string }
  /** A kick of interface A. */
  | { kind: 'kick'; target: KickTarget }
  /** A settings update of interface A at a channel, user, device, client or connection level. */
  | { kind: 'update'; target: UpdateTarget; owner: EventOwner }
  /** A connection's state moved by an event of its media server (src/media/media-events.ts). */
  | { kind: 'media'; applicationId: string; connection: ConnectionIds; state: ConnectionState };

const KINDS: ReadonlySet<string> = new Set(['edge', 'leave', 'close', 'unregister', 'kick', 'update', 'media']);

/** The context as written before its fields had names (`k`, `seq`, `a`, `c`, `gw`): entries pending at an upgrade. */
interface FirstShape {
  k: string;
  seq?: boolean;
  a?: string;
  c?: { userId: string; deviceId: string; clientId: string };
  gw?: string;
  session?: string;
  [field: string]: unknown;
}

/** A stored context, in either shape, as a JournalContext; null when it is neither. */
export function readJournalContext(stored: unknown): JournalContext | null {
  if (!stored || typeof stored !== 'object') return null;
  if ('kind' in stored) return KINDS.has(String(stored.kind)) ? (stored as JournalContext) : null;
  if (!('k' in stored)) return null;
  const { k, seq, a, c, gw, session, ...rest } = stored as FirstShape;
  if (!KINDS.has(k)) return null;
  if (k === 'edge') return { ...rest, kind: 'edge', together: seq === true } as JournalContext;
  if (k === 'unregister') {
    if (typeof a !== 'string' || !c) return null;
    const client = { applicationId: a, userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
    return { kind: 'unregister', client, cause: rest.cause as EventCause, onlyIfGateway: gw, onlyIfSession: session };
  }
  return { ...rest, kind: k } as JournalContext;
}
