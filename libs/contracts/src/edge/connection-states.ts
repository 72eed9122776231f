/**
 * The connection state machine enforced at the client edge (docs/sync-protocol.md):
 *
 *   new → initializing → connecting → connected → failing → failed
 *   any state before `closing` (except `failed`) → closing → closed
 *   new / initializing / connecting / connected → failing (a connection can fail at any stage)
 *
 * `failed` and `closed` are terminal. A connection is removed from the edge once it reaches a
 * terminal state or the client sends `connection.close`.
 */
import type { ConnectionState } from '../interface-a/runtime.js';

export const CONNECTION_TRANSITIONS: Readonly<Record<ConnectionState, readonly ConnectionState[]>> = {
  new: ['initializing', 'failing', 'closing'],
  initializing: ['connecting', 'failing', 'closing'],
  connecting: ['connected', 'failing', 'closing'],
  connected: ['failing', 'closing'],
  failing: ['failed', 'closing'],
  failed: [],
  closing: ['closed'],
  closed: [],
};

export function canTransition(from: ConnectionState, to: ConnectionState): boolean {
  return CONNECTION_TRANSITIONS[from].includes(to);
}

export function isTerminalState(state: ConnectionState): boolean {
  return CONNECTION_TRANSITIONS[state].length === 0;
}

/** The states a connection walks through from `new` to `connected`, in order (simulators, tests). */
export const CONNECT_PATH: readonly ConnectionState[] = ['initializing', 'connecting', 'connected'];
