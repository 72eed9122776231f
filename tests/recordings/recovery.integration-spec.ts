/**
 * recording-service killed (SIGKILL) in the middle of a recording, then restarted: the durable
 * consumer catches up on what happened meanwhile, redelivered and replayed events change nothing
 * twice, and a connection recording whose connection vanished without `connection.closed` is closed
 * and marked orphaned instead of staying open forever.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DomainEvent } from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import { ffmpegAvailable, probeFile } from '../../tools/media/media.mjs';
import {
  connectionEvent,
  publish,
  query,
  scopeOf,
  simConnection,
  startHarness,
  writeMediaFor,
  type Harness,
  type SimConnection,
} from './harness.js';

const ORG = `org-${randomUUID()}`;
const APP = 'crash-app';
const CH = 'crash-room';
const scope = scopeOf(ORG);

describe('recording-service killed mid-recording', () => {
  let h: Harness;
  const sent: DomainEvent[] = [];
  const xavier = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH,
    userId: 'xavier',
    connectionId: 'x-cam',
    recording: true,
  });
  const yolanda = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH,
    userId: 'yolanda',
    connectionId: 'y-cam',
    recording: true,
  });
  const base = Date.now();

  const at = (
    c: SimConnection,
    type: Parameters<typeof connectionEvent>[0],
    ms: number,
    change: Partial<SimConnection> = {},
  ) => {
    Object.assign(c, change);
    const e = connectionEvent(type, c, base + ms);
    sent.push(e);
    return e;
  };
  const sql = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: h.db.url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    if (!(await ffmpegAvailable()))
      throw new Error('ffmpeg and ffprobe are required by the recording tests (apt-get install ffmpeg)');
    h = await startHarness('recovery', {
      RECORDINGS_ORPHAN_TIMEOUT_MS: '3000',
      RECORDINGS_INGEST_TIMEOUT_MS: '3000',
      RECORDINGS_SWEEP_INTERVAL_MS: '500',
    });
    await h.start();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('closes the orphan, applies what happened while it was down once, and finishes the recording', async () => {
    await publish(h, [
      at(xavier, 'connection.connected', 0),
      at(yolanda, 'connection.connected', 100),
      at(yolanda, 'connection.updated', 300, { audioMuted: true }),
    ]);
    await waitFor(
      async () => {
        const list = await query(h, scope, {
          kind: 'channel.connectionRecordings.list',
          applicationId: APP,
          channelId: CH,
        });
        return list.length === 2 && list.find((c) => c.userId === 'yolanda')?.updates.length === 2;
      },
      { timeoutMs: 15000, description: 'both connections to be recording' },
    );

    // Crash in the middle of the recording.
    const exit = await h.service.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');

    // Meanwhile: yolanda unmutes and leaves; xavier's client vanishes without a word.
    await publish(h, [
      at(yolanda, 'connection.updated', 600, { audioMuted: false }),
      at(yolanda, 'connection.closed', 1500, { state: 'closed' }),
    ]);
    // Every event delivered again, as a publisher retrying past the duplicate window would.
    await publish(h, sent, { withMsgId: false });

    await h.start();
    await publish(h, sent, { withMsgId: false }); // and once more while it runs

    const stopped = await waitFor(
      async () => {
        const list = await query(h, scope, {
          kind: 'channel.connectionRecordings.list',
          applicationId: APP,
          channelId: CH,
        });
        return list.length === 2 && list.every((c) => c.stopTimestamp !== null) ? list : null;
      },
      {
        timeoutMs: 90000,
        description:
          'every connection recording to be closed (unacknowledged events of the killed consumer come back after the 60 s ack wait)',
      },
    );
    const x = stopped.find((c) => c.userId === 'xavier')!;
    const y = stopped.find((c) => c.userId === 'yolanda')!;
    expect(JSON.parse(x.metadata!)).toMatchObject({ orphaned: true });
    expect(x.stopTimestamp).toBe(new Date(base).toISOString()); // its last event
    expect(y.metadata).toBeNull();
    expect(y.stopTimestamp).toBe(new Date(base + 1500).toISOString());
    expect(y.updates.map((u) => [u.index, u.audioMuted])).toEqual([
      [0, false],
      [1, true],
      [2, false],
    ]);
    expect(x.updates).toHaveLength(1);

    // The media server side writes yolanda's files (xavier's never come: its ingest times out).
    const { written } = await writeMediaFor(h, yolanda, 500);
    expect(written.durationSeconds).toBeCloseTo(1.4, 1);
    const [recording] = await waitFor(
      async () => {
        const list = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH });
        return list[0]?.ready ? list : null;
      },
      { timeoutMs: 30000, intervalMs: 250, description: 'the channel recording to become ready' },
    );
    expect(recording).toMatchObject({
      ready: true,
      ingested: false,
      stopTimestamp: new Date(base + 1500).toISOString(),
    });
    const probed = await probeFile(recording!.filePath!);
    expect(probed.durationSeconds).toBeGreaterThan(1.2);
    expect(probed.durationSeconds).toBeLessThan(1.8);
    const xr = recording!.connectionRecordings.find((c) => c.userId === 'xavier')!;
    expect(xr).toMatchObject({ ingested: false, audioReady: false, videoReady: false });

    // Nothing applied twice: one channel recording, one timeline entry per change, each event once.
    expect(await query(h, scope, { kind: 'channel.recordings.count', applicationId: APP, channelId: CH })).toBe(1);
    const [{ n: updates }] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM recording.recording_update');
    expect(updates).toBe(4);
    const processed = await sql<{ event_id: string }>('SELECT event_id FROM recording.processed_event');
    expect(processed.map((p) => p.event_id).sort()).toEqual(sent.map((e) => e.event.id).sort());
    const open = await sql(
      'SELECT id FROM recording.connection_recording WHERE stop_timestamp IS NULL UNION ALL SELECT id FROM recording.channel_recording WHERE stop_timestamp IS NULL',
    );
    expect(open).toEqual([]);
    // The replays did reach the restarted service, and were recognised as already applied.
    const metrics = await (await fetch(`${h.service.url}/metrics`)).text();
    const duplicates = Number(
      /recording_domain_events_total\{outcome="duplicate"[^}]*\} (\d+)/.exec(metrics)?.[1] ?? 0,
    );
    expect(duplicates).toBeGreaterThanOrEqual(sent.length);
    expect(metrics).toMatch(/recording_sweeper_actions_total\{what="orphaned"[^}]*\} 1/);
  }, 180_000);

  it('forgets processed event ids and connection ends only once the stream can no longer deliver their events (its max age)', async () => {
    const day = 24 * 3600 * 1000;
    const gone = randomUUID();
    const deliverable = randomUUID();
    // The harness' stream keeps events 7 days (the contract's max age).
    await sql('INSERT INTO recording.processed_event (event_id, processed_on) VALUES ($1, $2), ($3, $4)', [
      gone,
      Date.now() - 8 * day,
      deliverable,
      Date.now() - 6 * day,
    ]);
    await sql(
      `INSERT INTO recording.connection_end (application_id, channel_id, user_id, device_id, client_id, connection_id, stop_timestamp, reason, created_on)
       VALUES ('app', 'ch', 'u', 'd', 'c', $1, 0, 'connection closed', $2), ('app', 'ch', 'u', 'd', 'c', $3, 0, 'connection closed', $4)`,
      [gone, Date.now() - 8 * day, deliverable, Date.now() - 6 * day],
    );
    await waitFor(
      async () =>
        (await sql('SELECT 1 FROM recording.processed_event WHERE event_id = $1', [gone])).length === 0 &&
        (await sql('SELECT 1 FROM recording.connection_end WHERE connection_id = $1', [gone])).length === 0,
      {
        timeoutMs: 10000,
        description: 'the sweeper to forget the id of an event, and a connection end, older than the stream keeps',
      },
    );
    expect(await sql('SELECT event_id FROM recording.processed_event WHERE event_id = $1', [deliverable])).toEqual([
      { event_id: deliverable },
    ]);
    expect(
      await sql('SELECT connection_id FROM recording.connection_end WHERE connection_id = ANY($1)', [
        [gone, deliverable],
      ]),
    ).toEqual([{ connection_id: deliverable }]);
    const kept = await sql<{ event_id: string }>(
      'SELECT event_id FROM recording.processed_event WHERE event_id = ANY($1)',
      [sent.map((e) => e.event.id)],
    );
    expect(kept).toHaveLength(sent.length);
  }, 30_000);
});
