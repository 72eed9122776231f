import type { ChangeNotice } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import { iso, type ChannelRecordingRow } from './rows.js';

/** Entity type of a channel recording in the change log: the type name of the entity set `/ChannelRecordings`. */
export const CHANNEL_RECORDING_ENTITY = 'ChannelRecording';

/** Who the change log names for a change nobody asked for (the sweeper deleting an expired recording). */
export const SWEEPER_ACTOR = 'recording-service';

/**
 * The properties a caller changes on a channel recording (interface A PATCH: `expiryTimestamp`;
 * delete, by a caller or the sweeper: `deleted`, `deletedOn`, `deletedBy`), as interface B shows
 * them. What the pipeline derives (stage, files, sizes, URLs) is not logged.
 */
function logged(r: ChannelRecordingRow): Record<string, string | null> {
  return {
    expiryTimestamp: iso(r.expiry_timestamp),
    deleted: String(r.deleted),
    deletedOn: iso(r.deleted_on),
    deletedBy: r.deleted_by,
  };
}

/**
 * The change notices of one change of a channel recording: one per logged property whose value
 * differs, each with a fresh change record id. Pure; the caller adds them to the outbox in the
 * transaction of the change.
 */
export function channelRecordingChanges(type: 'Update' | 'Delete', before: ChannelRecordingRow, after: ChannelRecordingRow, changedBy: string, changedOn: number): ChangeNotice[] {
  const was = logged(before);
  const now = logged(after);
  return Object.keys(now)
    .filter((property) => was[property] !== now[property])
    .map((property) => ({
      id: randomUUID(),
      organizationId: after.organization_id,
      type,
      entityType: CHANNEL_RECORDING_ENTITY,
      entityId: after.id,
      propertyName: property,
      oldValue: was[property] ?? null,
      newValue: now[property] ?? null,
      changedOn,
      changedBy,
    }));
}
