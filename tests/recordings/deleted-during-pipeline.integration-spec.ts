/**
 * A channel recording deleted while a pipeline step works on it: the step stops without touching
 * the deleted recording (no stage change, no `error`, no `channel.recording.mux.failed` about it).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DomainEvent } from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import {
  command,
  connectionEvent,
  publish,
  query,
  scopeOf,
  simConnection,
  startHarness,
  watchEvents,
  type Harness,
} from './harness.js';

const ORG = `org-${randomUUID()}`;
const APP = 'deleted-app';
const CH = 'deleted-room';
const scope = scopeOf(ORG);

/** Entries the service logged (JSON lines) with this message and channel recording. */
function logged(h: Harness, msg: string, channelRecordingId: string): boolean {
  return h.service
    .output()
    .split('\n')
    .some((line) => line.includes(channelRecordingId) && line.includes(`"msg":"${msg}"`));
}

describe('recording-service: a recording deleted while its pipeline runs', () => {
  let h: Harness;
  let db: pg.Client;
  let watched: { events: DomainEvent[] };

  beforeAll(async () => {
    // Debug entries tell when a step started; the ingest waits up to 30 s for the media files.
    h = await startHarness('deleted_during_pipeline', { LOG_LEVEL: 'debug' });
    watched = watchEvents(h);
    await h.start();
    db = new pg.Client({ connectionString: h.db.url });
    await db.connect();
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await h?.close();
  });

  it('an ingest waiting for files stops when the recording is deleted: not failed, nothing announced', async () => {
    const t0 = Date.now() - 60_000;
    const gil = simConnection({
      organizationId: ORG,
      applicationId: APP,
      channelId: CH,
      userId: 'gil',
      connectionId: 'gil-cam',
      recording: true,
    });
    await publish(h, [
      connectionEvent('connection.connected', gil, t0),
      connectionEvent('connection.closed', { ...gil, state: 'closed' }, t0 + 2000),
    ]);
    const [recording] = await waitFor(
      async () => {
        const list = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH });
        return list[0]?.stopTimestamp ? list : null;
      },
      { timeoutMs: 15000, description: 'the channel recording to stop' },
    );
    const id = recording!.id;
    // The ingest job is in its loop, waiting for the files the media server has not written.
    await waitFor(() => logged(h, 'recording ingest started', id), {
      timeoutMs: 15000,
      description: 'the ingest step to start',
    });

    await command(h, scope, {
      kind: 'channelRecording.delete',
      applicationId: APP,
      channelId: CH,
      channelRecordingId: id,
    });
    await waitFor(() => logged(h, 'recording ingest done', id) || logged(h, 'recording ingest failed', id), {
      timeoutMs: 15000,
      description: 'the ingest step to end',
    });

    // Before, the ingest found no (non-deleted) connection recording, marked the deleted recording
    // failed ("no media file was written") and announced channel.recording.mux.failed about it.
    const row = (
      await db.query<{ stage: string; error: string | null; deleted: boolean }>(
        'SELECT stage, error, deleted FROM recording.channel_recording WHERE id = $1',
        [id],
      )
    ).rows[0]!;
    expect(row).toEqual({ stage: 'ingesting', error: null, deleted: true });
    const outbox = await db.query(
      `SELECT 1 FROM recording.outbox WHERE payload->'event'->'channel'->'channelRecording'->>'id' = $1`,
      [id],
    );
    expect(outbox.rowCount).toBe(0);
    expect(watched.events.filter((e) => e.event.channel?.channelRecording?.id === id).map((e) => e.event.type)).toEqual(
      [],
    );
  }, 90_000);
});
