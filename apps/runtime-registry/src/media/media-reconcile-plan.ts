/**
 * Reconciliation of one Janus server with the registry (pure): what its `rooms.list` holds that the
 * registry does not, and what the registry holds as connected that Janus lost.
 */
import type { MediaRoomListing } from '@switchboard/contracts';

/** A registry connection placed on the server being reconciled. */
export interface HeldConnection {
  applicationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  type: string;
  state: string;
  /** When it was opened, and connected if it was (Redis clock, ms). */
  openedAt: number;
  connectedAt: number | null;
}

export interface ReconcileDecisions {
  /** Janus connections of a room the registry still holds, that the registry does not hold. */
  leave: Array<{ applicationId: string; channelId: string; connectionId: string }>;
  /** Rooms of channels with no registry connection on this server (their connections go with them). */
  destroy: Array<{ applicationId: string; channelId: string }>;
  /** Registry sfu connections connected for a while that Janus does not hold: failed. */
  fail: HeldConnection[];
}

const ENDED = new Set(['closed', 'failed']);

function channelKey(c: { applicationId: string; channelId: string }): string {
  return `${c.applicationId}\n${c.channelId}`;
}

/**
 * `held`: the registry's connections on this server, read after the listing (a join's registry
 * record exists before its Janus connection). `now` and `graceMs` spare connections in flight.
 */
export function reconcileDecisions(
  rooms: readonly MediaRoomListing[],
  held: readonly HeldConnection[],
  now: number,
  graceMs: number,
): ReconcileDecisions {
  const live = held.filter((c) => !ENDED.has(c.state));
  const liveByChannel = new Map<string, Set<string>>();
  for (const c of live) {
    const key = channelKey(c);
    liveByChannel.set(key, (liveByChannel.get(key) ?? new Set()).add(c.connectionId));
  }
  const decisions: ReconcileDecisions = { leave: [], destroy: [], fail: [] };
  const inJanus = new Set<string>();
  for (const room of rooms) {
    const { applicationId, channelId } = room;
    const kept = liveByChannel.get(channelKey(room));
    for (const c of room.connections) inJanus.add(`${channelKey(room)}\n${c.connectionId}`);
    if (!kept) {
      decisions.destroy.push({ applicationId, channelId });
      continue;
    }
    for (const c of room.connections)
      if (!kept.has(c.connectionId)) decisions.leave.push({ applicationId, channelId, connectionId: c.connectionId });
  }
  for (const c of live) {
    if (c.type !== 'sfu' || c.state !== 'connected') continue;
    if (now - Math.max(c.openedAt, c.connectedAt ?? 0) < graceMs) continue;
    if (!inJanus.has(`${channelKey(c)}\n${c.connectionId}`)) decisions.fail.push(c);
  }
  return decisions;
}
