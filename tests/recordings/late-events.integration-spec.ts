/**
 * Events that reach recording-service after later ones of the same connection (a redelivery after
 * a failed attempt, or another replica handling the later one first): a mute change from while the
 * connection was recording goes into its timeline at its time, whether the recording is still open
 * or already stopped; the recording's state stays that of the latest event, and a late event that
 * changes nothing adds nothing. A connection's end applied before its connect ends the recording
 * the late connect starts.
 */
import { randomUUID } from 'node:crypto';
import { waitFor } from '@switchboard/testing';
import {
  connectionEvent,
  publish,
  query,
  scopeOf,
  simConnection,
  startHarness,
  type Harness,
  type SimConnection,
} from './harness.js';

const ORG = `org-${randomUUID()}`;
const APP = 'late-app';
const CH = 'late-room';
const scope = scopeOf(ORG);

describe('recording-service: events arriving after later ones', () => {
  let h: Harness;
  const base = Date.now();
  const ada = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH,
    userId: 'ada',
    connectionId: 'ada-cam',
    recording: true,
  });
  const bob = simConnection({
    organizationId: ORG,
    applicationId: APP,
    channelId: CH,
    userId: 'bob',
    connectionId: 'bob-cam',
    recording: true,
  });
  const event = (
    c: SimConnection,
    type: Parameters<typeof connectionEvent>[0],
    ms: number,
    change: Partial<SimConnection> = {},
  ) => connectionEvent(type, { ...c, ...change }, base + ms);

  beforeAll(async () => {
    h = await startHarness('late_events');
    await h.start();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('puts a late change into the timeline at its time, open or stopped, and nothing for a late event that changes nothing', async () => {
    // In stream order; "late" events come after events that happened later.
    await publish(h, [
      event(ada, 'connection.connected', 0),
      event(bob, 'connection.connected', 0),
      event(ada, 'connection.updated', 900, { audioMuted: true, videoMuted: true }),
      event(bob, 'connection.updated', 300, { audioMuted: true }),
      event(bob, 'connection.closed', 1500, { audioMuted: true, state: 'closed' }),
      event(ada, 'connection.updated', 400, { videoMuted: true }), // late, ada still recording
      event(ada, 'connection.updated', 200), // late, the same state as before it: nothing to add
      event(bob, 'connection.updated', 600, { audioMuted: false }), // late, bob's recording stopped at 1500
    ]);
    const list = await waitFor(
      async () => {
        const l = await query(h, scope, {
          kind: 'channel.connectionRecordings.list',
          applicationId: APP,
          channelId: CH,
        });
        return l.find((c) => c.userId === 'bob')?.updates.length === 3 ? l : null;
      },
      { timeoutMs: 20000, description: "bob's late unmute in his timeline" },
    );
    const timeline = (userId: string) =>
      list
        .find((c) => c.userId === userId)!
        .updates.map((u) => [u.index, new Date(u.timestamp).getTime() - base, u.audioMuted, u.videoMuted]);

    expect(timeline('ada')).toEqual([
      [0, 0, false, false],
      [1, 400, false, true],
      [2, 900, true, true],
    ]);
    expect(timeline('bob')).toEqual([
      [0, 0, false, false],
      [1, 300, true, false],
      [2, 600, false, false],
    ]);
    const ada2 = list.find((c) => c.userId === 'ada')!;
    const bob2 = list.find((c) => c.userId === 'bob')!;
    expect(ada2.stopTimestamp).toBeNull();
    expect(bob2.stopTimestamp).toBe(new Date(base + 1500).toISOString());
  }, 60_000);

  it('a connection whose end is applied before its connect gets a recording from its connect to its end, not one nothing closes', async () => {
    // Another replica (or a redelivery) applies the close first; the connect and a mute come after.
    const carol = simConnection({
      organizationId: ORG,
      applicationId: APP,
      channelId: CH,
      userId: 'carol',
      connectionId: 'carol-cam',
      recording: true,
    });
    await publish(h, [
      event(carol, 'connection.closed', 1000, { state: 'closed' }),
      event(carol, 'connection.connected', 100),
      event(carol, 'connection.updated', 500, { audioMuted: true }),
    ]);
    const recording = await waitFor(
      async () => {
        const l = await query(h, scope, {
          kind: 'channel.connectionRecordings.list',
          applicationId: APP,
          channelId: CH,
        });
        const c = l.find((r) => r.userId === 'carol');
        return c?.updates.length === 2 ? c : null;
      },
      { timeoutMs: 20000, description: "carol's recording with her late mute" },
    );
    expect(recording.startTimestamp).toBe(new Date(base + 100).toISOString());
    expect(recording.stopTimestamp).toBe(new Date(base + 1000).toISOString());
    expect(recording.updates.map((u) => [u.index, new Date(u.timestamp).getTime() - base, u.audioMuted])).toEqual([
      [0, 100, false],
      [1, 500, true],
    ]);
    // Ada still records: the channel recording they share stays open.
    const channels = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH });
    expect(channels.map((c) => c.stopTimestamp)).toEqual([null]);
  }, 60_000);
});
