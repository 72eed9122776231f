/**
 * Channel recordings in the interface B change log: recording-service owns the records, so it
 * writes their change records as change notices in the transaction of the change (its change
 * outbox), relays them to the change notice stream, and management-api stores them in its change
 * log, once per notice id. An expiry patch (interface A, over NATS as admin-gateway sends it), a
 * delete through interface B and a deletion by the expiry sweeper each show in
 * `/ChangeRecords?$filter=entityId eq '<id>'`. Real management-api and recording-service on one
 * namespace; the recordings are finished rows written straight into the recording schema.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { changeSubject, RECORDING_CHANGE_OWNER, type ChangeNotice } from '@switchboard/contracts';
import { ensureChangeStream } from '@switchboard/service-kit';
import { waitFor } from '@switchboard/testing';
import pg from 'pg';
import { changesOf, startManagement, type Harness as ManagementHarness } from '../management/support.js';
import { command, startHarness, type Harness } from './harness.js';

describe('channel recordings in the change log', () => {
  let m: ManagementHarness;
  let h: Harness;
  let db: pg.Pool;
  let app: string;
  const CH = 'room';

  const sql = async <T extends pg.QueryResultRow>(text: string, params: unknown[] = []) =>
    (await db.query<T>(text, params)).rows;

  /** A finished recording of organization A's application (expiry: Unix ms or null). */
  async function finishedRecording(expiry: number | null): Promise<string> {
    const id = randomUUID();
    const now = Date.now();
    await sql(
      `INSERT INTO recording.channel_recording (id, organization_id, application_id, channel_id, created_on, modified_on, start_timestamp, stop_timestamp, expiry_timestamp, stage, stage_changed_on)
       VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, 'ready', $5)`,
      [id, m.orgA, app, CH, now, now - 60_000, now - 30_000, expiry],
    );
    return id;
  }

  const logged = (records: Array<Record<string, any>>) =>
    records.map((r) => [r.type, r.entityType, r.propertyName, r.oldValue, r.newValue]);

  beforeAll(async () => {
    m = await startManagement('reclog');
    h = await startHarness('reclog', {}, m.ns);
    await h.start();
    db = new pg.Pool({ connectionString: h.db.url, max: 2 });
    db.on('error', () => undefined);
    app = `${m.ns}-app`.replace(/_/g, '-');
    assert.equal((await m.api('POST', '/ApplicationConfigs', { body: { applicationId: app } })).status, 201);
  }, 90_000);

  afterAll(async () => {
    await db?.end();
    await h?.close();
    await m?.stop();
  });

  it('an expiry patch and a delete through interface B write their change records', async () => {
    const id = await finishedRecording(null);
    const ref = { applicationId: app, channelId: CH, channelRecordingId: id };
    const admin = { organizationId: m.orgA, operator: false, principal: randomUUID() };
    const first = new Date(Date.now() + 3_600_000);
    first.setUTCMilliseconds(0);
    const second = new Date(first.getTime() + 3_600_000);
    await command(h, admin, {
      kind: 'channelRecording.update',
      ...ref,
      patch: { expiryTimestamp: first.toISOString() },
    });
    await command(h, admin, {
      kind: 'channelRecording.update',
      ...ref,
      patch: { expiryTimestamp: second.toISOString() },
    });
    await command(h, admin, {
      kind: 'channelRecording.update',
      ...ref,
      patch: { expiryTimestamp: second.toISOString() },
    }); // unchanged: nothing logged
    const updates = await waitFor(async () => ((await changesOf(m, id)).length >= 2 ? changesOf(m, id) : null), {
      timeoutMs: 20000,
      description: 'the change records of the expiry patches',
    });
    expect(logged(updates)).toEqual([
      ['Update', 'ChannelRecording', 'expiryTimestamp', null, first.toISOString()],
      ['Update', 'ChannelRecording', 'expiryTimestamp', first.toISOString(), second.toISOString()],
    ]);
    for (const r of updates)
      expect(r).toMatchObject({
        entityId: id,
        changedBy: admin.principal,
        changedOn: expect.any(Number),
        id: expect.any(String),
      });

    // A connection recording of it: deleted with it, so logged with it.
    const child = randomUUID();
    const t = Date.now();
    await sql(
      `INSERT INTO recording.connection_recording (id, channel_recording_id, organization_id, application_id, channel_id, user_id, device_id, client_id, connection_id,
         created_on, modified_on, start_timestamp, stop_timestamp, last_event_on, last_seen_on)
       VALUES ($1, $2, $3, $4, $5, 'u1', 'd1', 'c1', 'cn1', $6, $6, $7, $8, $8, $8)`,
      [child, id, m.orgA, app, CH, t, t - 60_000, t - 30_000],
    );
    const deleted = await m.api('DELETE', `/ChannelRecordings/${app}/${CH}/${id}`);
    expect(deleted.status).toBe(200);
    const all = await waitFor(async () => ((await changesOf(m, id)).length >= 5 ? changesOf(m, id) : null), {
      timeoutMs: 20000,
      description: 'the change records of the delete',
    });
    const childRecords = await waitFor(
      async () => ((await changesOf(m, child)).length >= 3 ? changesOf(m, child) : null),
      { timeoutMs: 20000, description: "the connection recording's change records" },
    );
    expect(logged(childRecords)).toEqual([
      ['Delete', 'ConnectionRecording', 'deleted', 'false', 'true'],
      ['Delete', 'ConnectionRecording', 'deletedOn', null, expect.any(String)],
      ['Delete', 'ConnectionRecording', 'deletedBy', null, expect.any(String)],
    ]);
    const deletes = all.filter((r) => r.type === 'Delete');
    const [{ deleted_on: deletedOn, deleted_by: deletedBy }] = await sql<{
      deleted_on: string;
      deleted_by: string | null;
    }>('SELECT deleted_on, deleted_by FROM recording.channel_recording WHERE id = $1', [id]);
    expect(deletedBy).not.toBeNull();
    expect(logged(deletes)).toEqual([
      ['Delete', 'ChannelRecording', 'deleted', 'false', 'true'],
      ['Delete', 'ChannelRecording', 'deletedOn', null, new Date(Number(deletedOn)).toISOString()],
      ['Delete', 'ChannelRecording', 'deletedBy', null, deletedBy],
    ]);
    expect(new Set(deletes.map((r) => r.changedBy))).toEqual(new Set([deletedBy]));
    expect(all).toHaveLength(5);
    // Organization B's credential sees none of them.
    expect(await changesOf(m, id, m.keyB)).toEqual([]);
  }, 60_000);

  it('the sweeper deleting an expired recording writes its change records', async () => {
    const id = await finishedRecording(Date.now() - 1000);
    const records = await waitFor(async () => ((await changesOf(m, id)).length >= 2 ? changesOf(m, id) : null), {
      timeoutMs: 20000,
      description: 'the change records of the expiry',
    });
    expect(logged(records)).toEqual([
      ['Delete', 'ChannelRecording', 'deleted', 'false', 'true'],
      ['Delete', 'ChannelRecording', 'deletedOn', null, expect.any(String)],
    ]);
    expect(records.every((r) => r.changedBy === 'recording-service')).toBe(true);
  }, 60_000);

  it('a notice delivered again is stored once; a malformed one is dropped without holding up the next', async () => {
    const js = jetstream(h.nc);
    await ensureChangeStream(await jetstreamManager(h.nc), m.ns);
    const subject = changeSubject(m.ns, RECORDING_CHANGE_OWNER);
    const entityId = randomUUID();
    const notice: ChangeNotice = {
      id: randomUUID(),
      organizationId: m.orgA,
      type: 'Update',
      entityType: 'ChannelRecording',
      entityId,
      propertyName: 'expiryTimestamp',
      oldValue: null,
      newValue: '2030-01-01T00:00:00.000Z',
      changedOn: Date.now(),
      changedBy: 'redelivery-test',
    };
    const marker: ChangeNotice = { ...notice, id: randomUUID(), entityId: randomUUID() };
    // No Nats-Msg-Id: JetStream keeps both copies, as after a relay retried past its duplicate window.
    await js.publish(subject, JSON.stringify(notice));
    await js.publish(subject, JSON.stringify(notice));
    await js.publish(subject, JSON.stringify({ ...notice, id: 'not-a-uuid' }));
    await js.publish(subject, JSON.stringify(marker));
    // Notices are handled in stream order: once the marker is stored, every copy before it was handled.
    await waitFor(async () => (await changesOf(m, marker.entityId)).length === 1, {
      timeoutMs: 20000,
      description: 'the marker notice to be stored',
    });
    const stored = await changesOf(m, entityId);
    expect(stored).toEqual([
      {
        id: notice.id,
        type: 'Update',
        entityType: 'ChannelRecording',
        entityId,
        propertyName: 'expiryTimestamp',
        oldValue: null,
        newValue: '2030-01-01T00:00:00.000Z',
        changedOn: notice.changedOn,
        changedBy: 'redelivery-test',
        ...Object.fromEntries(
          Object.keys(stored[0] ?? {})
            .filter((k) => ['createdOn', 'createdBy', 'modifiedOn', 'modifiedBy'].includes(k))
            .map((k) => [k, stored[0]![k]]),
        ),
      },
    ]);
  }, 60_000);
});
