import type { ChangeNotice } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import { isoDateOrNull, type ChannelRecordingRow, type ConnectionRecordingRow } from './rows.js';

/**
 * Entity types in the change log: the type names of the entity sets `/ChannelRecordings` and `/ConnectionRecordings`.
 */
export const CHANNEL_RECORDING_ENTITY = 'ChannelRecording';
export const CONNECTION_RECORDING_ENTITY = 'ConnectionRecording';

/** Who the change log names for a change nobody asked for (the sweeper deleting an expired recording). */
export const SWEEPER_ACTOR = 'recording-service';

/**
 * The properties a caller changes on a recording (interface A PATCH of a channel recording:
 * `expiryTimestamp`; delete, by a caller or the sweeper, of a channel recording and with it its
 * connection recordings: `deleted`, `deletedOn`, `deletedBy`), as interface B shows them. What the
 * pipeline derives (stage, files, sizes, URLs) is not logged.
 */
function logged(r: ChannelRecordingRow | ConnectionRecordingRow): Record<string, string | null> {
  return {
    ...('expiry_timestamp' in r ? { expiryTimestamp: isoDateOrNull(r.expiry_timestamp) } : {}),
    deleted: String(r.deleted),
    deletedOn: isoDateOrNull(r.deleted_on),
    deletedBy: r.deleted_by,
  };
}

/**
 * The change notices of one change of a recording: one per logged property whose value differs,
 * each with a fresh change record id. Pure; the caller adds them to the outbox in the transaction
 * of the change.
 */
function recordingChanges<R extends ChannelRecordingRow | ConnectionRecordingRow>(
  entityType: string,
  type: 'Update' | 'Delete',
  before: R,
  after: R,
  changedBy: string,
  changedOn: number,
): ChangeNotice[] {
  const was = logged(before);
  const now = logged(after);
  return Object.keys(now)
    .filter((property) => was[property] !== now[property])
    .map((property) => ({
      id: randomUUID(),
      organizationId: after.organization_id,
      type,
      entityType,
      entityId: after.id,
      propertyName: property,
      oldValue: was[property] ?? null,
      newValue: now[property] ?? null,
      changedOn,
      changedBy,
    }));
}

export function channelRecordingChanges(
  type: 'Update' | 'Delete',
  before: ChannelRecordingRow,
  after: ChannelRecordingRow,
  changedBy: string,
  changedOn: number,
): ChangeNotice[] {
  return recordingChanges(CHANNEL_RECORDING_ENTITY, type, before, after, changedBy, changedOn);
}

/** The connection recordings a delete changed, matched by id (`after` holds them as the delete left them). */
export function connectionRecordingChanges(
  before: readonly ConnectionRecordingRow[],
  after: readonly ConnectionRecordingRow[],
  changedBy: string,
  changedOn: number,
): ChangeNotice[] {
  const was = new Map(before.map((c) => [c.id, c]));
  return after.flatMap((c) => {
    const prior = was.get(c.id);
    return prior ? recordingChanges(CONNECTION_RECORDING_ENTITY, 'Delete', prior, c, changedBy, changedOn) : [];
  });
}
