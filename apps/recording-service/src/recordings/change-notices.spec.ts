import { changeNotice } from '@switchboard/contracts';
import {
  channelRecordingChanges,
  CHANNEL_RECORDING_ENTITY,
  connectionRecordingChanges,
  CONNECTION_RECORDING_ENTITY,
} from './change-notices.js';
import type { ChannelRecordingRow, ConnectionRecordingRow } from './rows.js';

const ORG = '7d1f8a52-6c1e-4d55-9a43-0f6b1f0f9a10';
const row = (over: Partial<ChannelRecordingRow>): ChannelRecordingRow =>
  ({
    id: 'b0a7c3de-1f61-4a3c-8f0e-5c9a1f3e2d10',
    organization_id: ORG,
    expiry_timestamp: null,
    deleted: false,
    deleted_on: null,
    deleted_by: null,
    ready: true,
    file_path: 'x',
    ...over,
  }) as ChannelRecordingRow;

describe('change notices of a channel recording', () => {
  it('an expiry update is one Update notice of expiryTimestamp, as interface B shows it', () => {
    const [notice, ...rest] = channelRecordingChanges(
      'Update',
      row({}),
      row({ expiry_timestamp: '1767225600000' }),
      'key-1',
      42,
    );
    expect(rest).toEqual([]);
    expect(notice).toEqual({
      id: expect.any(String),
      organizationId: ORG,
      type: 'Update',
      entityType: CHANNEL_RECORDING_ENTITY,
      entityId: row({}).id,
      propertyName: 'expiryTimestamp',
      oldValue: null,
      newValue: '2026-01-01T00:00:00.000Z',
      changedOn: 42,
      changedBy: 'key-1',
    });
    expect(changeNotice.check(notice)).toBe(true);
  });

  it('a delete logs deleted, deletedOn and deletedBy; derived file state is not logged', () => {
    const actor = '1c7f0e7a-2b1d-4c8e-9d6a-3f2e1a0b9c8d';
    const notices = channelRecordingChanges(
      'Delete',
      row({}),
      row({ deleted: true, deleted_on: '1767225600000', deleted_by: actor, ready: false, file_path: null }),
      actor,
      7,
    );
    expect(notices.map((n) => [n.type, n.propertyName, n.oldValue, n.newValue])).toEqual([
      ['Delete', 'deleted', 'false', 'true'],
      ['Delete', 'deletedOn', null, '2026-01-01T00:00:00.000Z'],
      ['Delete', 'deletedBy', null, actor],
    ]);
    expect(new Set(notices.map((n) => n.id)).size).toBe(3);
    for (const n of notices) expect(changeNotice.check(n)).toBe(true);
  });

  it('no change, no notice', () => {
    expect(
      channelRecordingChanges('Update', row({ expiry_timestamp: '5' }), row({ expiry_timestamp: '5' }), 'k', 1),
    ).toEqual([]);
  });

  it("a delete logs each connection recording it deleted too, under the connection recording's own id", () => {
    const actor = '1c7f0e7a-2b1d-4c8e-9d6a-3f2e1a0b9c8d';
    const child = (id: string, over: Partial<ConnectionRecordingRow>): ConnectionRecordingRow =>
      ({
        id,
        organization_id: ORG,
        deleted: false,
        deleted_on: null,
        deleted_by: null,
        audio_ready: true,
        ...over,
      }) as ConnectionRecordingRow;
    const before = [
      child('c1', {}),
      child('c2', {}),
      child('c3', { deleted: true, deleted_on: '5', deleted_by: actor }),
    ];
    // The delete's UPDATE returns the ones it changed (not c3, deleted before).
    const after = [
      child('c1', { deleted: true, deleted_on: '1767225600000', deleted_by: actor }),
      child('c2', { deleted: true, deleted_on: '1767225600000', deleted_by: actor }),
    ];
    const notices = connectionRecordingChanges(before, after, actor, 7);
    expect(notices.map((n) => [n.entityType, n.entityId, n.type, n.propertyName, n.oldValue, n.newValue])).toEqual([
      [CONNECTION_RECORDING_ENTITY, 'c1', 'Delete', 'deleted', 'false', 'true'],
      [CONNECTION_RECORDING_ENTITY, 'c1', 'Delete', 'deletedOn', null, '2026-01-01T00:00:00.000Z'],
      [CONNECTION_RECORDING_ENTITY, 'c1', 'Delete', 'deletedBy', null, actor],
      [CONNECTION_RECORDING_ENTITY, 'c2', 'Delete', 'deleted', 'false', 'true'],
      [CONNECTION_RECORDING_ENTITY, 'c2', 'Delete', 'deletedOn', null, '2026-01-01T00:00:00.000Z'],
      [CONNECTION_RECORDING_ENTITY, 'c2', 'Delete', 'deletedBy', null, actor],
    ]);
  });
});
