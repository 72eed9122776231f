import type { EdgeReport, KickTarget, UpdateTarget } from '@switchboard/contracts';
import type { EventCause, EventOwner } from '../model/events.js';
import type { ClientIds } from '../store/live-store.js';

/**
 * The context of an operation journal entry (events/journal.ts): what a replica needs, with the
 * script's answer, to build the operation's events again exactly as the replica that applied it
 * did. One kind per operation whose retry would not emit them (it changes nothing the
 * second time): the others (messages, statistics, patches of a client or connection) emit on every
 * run, so a retry of one cut off by a crash emits its events anyway.
 */
export type JournalContext =
  /** Client edge reports applied by one script run (`seq`: by `rtSequence`, several of them). */
  | { k: 'edge'; reports: EdgeReport[]; seq: boolean }
  | { k: 'leave'; report: Extract<EdgeReport, { kind: 'client.leave' }> }
  | { k: 'close'; report: Extract<EdgeReport, { kind: 'connection.close' }> }
  /** An unregister (a report, or the housekeeping pass dropping the clients of a gone gateway). */
  | { k: 'unregister'; a: string; c: ClientIds; cause: EventCause; gw?: string; session?: string }
  /** A kick of interface A. */
  | { k: 'kick'; target: KickTarget }
  /** A settings update of interface A at a channel, user, device, client or connection level. */
  | { k: 'update'; target: UpdateTarget; owner: EventOwner };
