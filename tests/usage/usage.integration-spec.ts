/**
 * Usage from real events: usage-aggregator runs as its own process on real NATS (JetStream),
 * PostgreSQL and Redis; the tests publish EventInfo-shaped domain events to the stream with
 * timestamps they choose, and read usage back through `usage-aggregator.v1.usage.list` (management-api's `GET /Usage`).
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName, usageQueryErrorCode, type CallerScope, type DomainEvent } from '@switchboard/contracts';
import {
  createTestDatabase,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import {
  backlogScenario,
  clientLeftEvent,
  connectionEvent,
  HOUR,
  messageEvent,
  MIN,
  participant,
  summarize,
  UsageHarness,
} from './usage-harness.js';

const ORG = 'org-1';
const OTHER_ORG = 'org-2';
const APP = 'app-session';
const OTHER_APP = 'app-other';
const scope: CallerScope = { organizationId: ORG, operator: false, principal: 'key-1' };
const otherScope: CallerScope = { organizationId: OTHER_ORG, operator: false, principal: 'key-2' };
const operator: CallerScope = { organizationId: null, operator: true, principal: 'operator' };

/** 2025-03-01 at hh:mm:ss UTC. */
const at = (h: number, m = 0, s = 0) => Date.UTC(2025, 2, 1, h, m, s);
const iso = (h: number) => new Date(at(h)).toISOString();

const HD = { width: 1280, height: 720 }; // 921600 pixels
const FULL_HD = { width: 1920, height: 1080 }; // 2073600 pixels

/** The scripted session of `app-session` (org-1), 10:00 to 13:00; what each participant adds is noted at it. */
function scriptedSession(): DomainEvent[] {
  // Video 10:40-11:20, 640x360 then 1280x720 from 10:50 (connection.updated): 20 min in hour 10, 20 in hour 11.
  const alice = participant(APP, ORG, 'alice', true);
  // Audio only, 10:30-12:15:30: 30 / 60 / 15.5 min at 0 pixels.
  const bob = participant(APP, ORG, 'bob', false);
  // Failed at 10:35 without ever being connected: nothing.
  const carol = participant(APP, ORG, 'carol', true);
  // Video from 11:50, 1920x1080 at 11:55, left the channel at 12:05 without a connection.closed: 10 + 5 min.
  const dave = participant(APP, ORG, 'dave', true);
  // Audio only from 12:30, never closed: 30 min in hour 12, 60 in each later hour.
  const eve = participant(APP, ORG, 'eve', false);
  // Video 10:05-10:25; a 320x240 sample taken at 10:20 arrives after the close: his 20 min move to 76800 pixels.
  const frank = participant(APP, ORG, 'frank', true);
  return [
    connectionEvent('connection.connected', frank, at(10, 5)),
    connectionEvent('connection.connected', bob, at(10, 30)),
    messageEvent('channel.client.message', bob, at(10, 31)),
    connectionEvent('connection.failed', carol, at(10, 35)),
    connectionEvent('connection.connected', alice, at(10, 40)),
    messageEvent('channel.client.message', alice, at(10, 41)),
    connectionEvent('connection.stats', alice, at(10, 45), { width: 640, height: 360 }),
    connectionEvent('connection.updated', alice, at(10, 50), HD),
    connectionEvent('connection.stats', alice, at(10, 51), { width: 640, height: 360 }),
    messageEvent('client.message', alice, at(10, 52)),
    connectionEvent('connection.closed', frank, at(10, 25)),
    messageEvent('channel.client.message', bob, at(10, 59, 59)),
    messageEvent('channel.client.message', alice, at(11, 0)),
    connectionEvent('connection.closed', alice, at(11, 20)),
    connectionEvent('connection.connected', dave, at(11, 50)),
    connectionEvent('connection.stats', dave, at(11, 55), FULL_HD),
    messageEvent('client.message', dave, at(11, 56)),
    clientLeftEvent(dave, at(12, 5)),
    connectionEvent('connection.closed', bob, at(12, 15, 30)),
    messageEvent('channel.server.message', bob, at(12, 20)),
    connectionEvent('connection.connected', eve, at(12, 30)),
    // Late: taken before frank's close, delivered after it.
    connectionEvent('connection.stats', frank, at(10, 20), { width: 320, height: 240 }),
  ];
}

// Messages: 3 channel and 1 client message in hour 10, 2 in hour 11; a server message (hour 12) does not count.
const EXPECTED_10_TO_13 = {
  [iso(10)]: { messages: 4, minutes: { 0: 30, 76800: 20, 921600: 20 } },
  [iso(11)]: { messages: 2, minutes: { 0: 60, 921600: 20, 2073600: 10 } },
  [iso(12)]: { messages: 0, minutes: { 0: 15.5 + 30, 2073600: 5 } },
};

/** Another organization's application, with usage in the same hours. */
function otherOrganization(): DomainEvent[] {
  const zed = participant(OTHER_APP, OTHER_ORG, 'zed', true);
  return [
    connectionEvent('connection.connected', zed, at(10, 0), HD),
    messageEvent('channel.client.message', zed, at(10, 10)),
    connectionEvent('connection.closed', zed, at(10, 45)),
  ];
}

describe('usage-aggregator', () => {
  const servers = testServers();
  const ns = testNamespace('usage');
  let db: TestDatabase;
  let env: Record<string, string>;
  let service: SpawnedService | undefined;
  let nc: NatsConnection;
  let h: UsageHarness;
  let session: DomainEvent[];

  async function start(): Promise<SpawnedService> {
    service = await spawnService('usage-aggregator', { ...env, HTTP_PORT: String(await freePort()) });
    return service;
  }

  beforeAll(async () => {
    db = await createTestDatabase('usage');
    env = serviceTestEnv(ns, db.url);
    nc = await connect({ servers: servers.natsUrl });
    h = new UsageHarness(nc, ns, db.url);
    // The aggregator creates the event stream when it starts before the producer.
    await start();
    session = scriptedSession();
    await h.publishAll([...session, ...otherOrganization()]);
    await h.drained();
  });

  afterAll(async () => {
    await service?.stop();
    await (await h?.jsm())?.streams.delete(eventStreamName(ns)).catch(() => undefined);
    await nc?.close();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await db?.drop();
  });

  describe('the scripted session', () => {
    it('yields exactly the expected participant minutes per bucket and message counts, hour by hour', async () => {
      const answer = await h.query(scope, APP, at(10), at(13));
      expect(summarize(answer)).toEqual(EXPECTED_10_TO_13);
      expect(answer.value.map((r) => [r.applicationId, r.startTimestamp, r.endTimestamp])).toEqual([
        [APP, iso(10), iso(11)],
        [APP, iso(11), iso(12)],
        [APP, iso(12), iso(13)],
      ]);
      expect(answer['@odata.count']).toBeUndefined();
      // Buckets come sorted by key; ids are UUIDs, the same in every answer.
      expect(answer.value[1]!.participantMinutes!.map((e) => e.key)).toEqual([0, 921600, 2073600]);
      for (const r of answer.value)
        expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect((await h.query(scope, APP, at(10), at(13))).value.map((r) => r.id)).toEqual(answer.value.map((r) => r.id));
    });

    it('widens a window to whole hours; the records of a window sum to the window', async () => {
      expect(summarize(await h.query(scope, APP, at(10, 15), at(11, 5)))).toEqual({
        [iso(10)]: EXPECTED_10_TO_13[iso(10)],
        [iso(11)]: EXPECTED_10_TO_13[iso(11)],
      });
      expect(summarize(await h.query(scope, APP, at(12), at(12, 0, 1)))).toEqual({
        [iso(12)]: EXPECTED_10_TO_13[iso(12)],
      });
      const day = await h.query(scope, APP, at(0), at(24));
      const total = (bucket: number) =>
        day.value
          .slice(0, 3)
          .reduce(
            (sum, r) => sum + (r.participantMinutes!.find((e) => e.key === bucket)?.value.usageParticipantMinutes ?? 0),
            0,
          );
      expect([total(0), total(76800), total(921600), total(2073600)]).toEqual([30 + 60 + 45.5, 20, 40, 15]);
      expect(day.value.slice(0, 3).reduce((sum, r) => sum + r.participantMessages!, 0)).toBe(6);
    });

    it("includes an open connection's time up to the end of the window (here in the past) in every hour it spans", async () => {
      const later = await h.query(scope, APP, at(12), at(15));
      expect(summarize(later)).toEqual({
        [iso(12)]: EXPECTED_10_TO_13[iso(12)],
        [iso(13)]: { messages: 0, minutes: { 0: 60 } },
        [iso(14)]: { messages: 0, minutes: { 0: 60 } },
      });
    });

    it('counts a connection open right now up to now: past hours exactly, the current hour partly', async () => {
      const now = Date.now();
      const live = participant('app-live', ORG, 'liv', false);
      const connectedAt = now - 90 * MIN;
      await h.publish(connectionEvent('connection.connected', live, connectedAt));
      await h.drained();
      const answer = await h.query(scope, 'app-live', now - 2 * HOUR, now + HOUR);
      const firstHourEnd = connectedAt - (connectedAt % HOUR) + HOUR;
      const minutes = answer.value.map((r) => r.participantMinutes![0]!.value.usageParticipantMinutes!);
      expect(minutes[0]).toBe((firstHourEnd - connectedAt) / MIN);
      if (minutes.length === 3) expect(minutes[1]).toBe(60);
      expect(minutes.at(-1)).toBeGreaterThan(0);
      expect(minutes.at(-1)).toBeLessThanOrEqual(60);
      expect(answer.value.at(-1)!.startTimestamp).toBe(
        new Date(Date.parse(answer.value.at(-1)!.endTimestamp!) - HOUR).toISOString(),
      );
    });
  });

  describe('OData options', () => {
    it('filters, orders, pages, counts and selects', async () => {
      const filtered = await h.query(scope, APP, at(0), at(13), {
        $filter: 'participantMessages gt 0',
        $orderby: 'startTimestamp desc',
      });
      expect(filtered.value.map((r) => r.startTimestamp)).toEqual([iso(11), iso(10)]);

      const page = await h.query(scope, APP, at(0), at(13), { $top: '1', $skip: '1', $count: 'true' });
      expect(page['@odata.count']).toBe(3);
      expect(page.value.map((r) => r.startTimestamp)).toEqual([iso(11)]);

      const byTime = await h.query(scope, APP, at(0), at(13), {
        $filter: 'startTimestamp ge 2025-03-01T11:00:00Z and endTimestamp le 2025-03-01T12:00:00Z',
      });
      expect(byTime.value.map((r) => r.startTimestamp)).toEqual([iso(11)]);

      const selected = await h.query(scope, APP, at(10), at(11), { $select: 'startTimestamp,participantMinutes' });
      expect(selected.value).toEqual([
        {
          startTimestamp: iso(10),
          participantMinutes: [
            { key: 0, value: { maxPixelCount: 0, usageParticipantMinutes: 30 } },
            { key: 76800, value: { maxPixelCount: 76800, usageParticipantMinutes: 20 } },
            { key: 921600, value: { maxPixelCount: 921600, usageParticipantMinutes: 20 } },
          ],
        },
      ]);
    });

    it('refuses unknown properties and unsupported options with the OData code in the detail', async () => {
      const unknown = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: at(10),
        endTimestamp: at(13),
        query: { $filter: 'nope eq 1' },
      });
      expect(unknown.err).toMatchObject({ code: 'ValidationFailed', details: [{ field: '$filter' }] });
      expect(usageQueryErrorCode(unknown.err!.details![0]!.message)).toBe('UnknownProperty');

      const notFilterable = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: at(10),
        endTimestamp: at(13),
        query: { $orderby: 'participantMinutes' },
      });
      expect(notFilterable.err).toMatchObject({ code: 'ValidationFailed', details: [{ field: '$orderby' }] });

      const expand = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: at(10),
        endTimestamp: at(13),
        query: { $expand: 'x' },
      });
      expect(expand.err).toMatchObject({ code: 'ValidationFailed' });

      const backwards = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: at(13),
        endTimestamp: at(10),
        query: {},
      });
      expect(backwards.err).toMatchObject({ code: 'ValidationFailed' });
      const noScope = await h.ask({ applicationId: APP, startTimestamp: at(10), endTimestamp: at(13), query: {} });
      expect(noScope.err).toMatchObject({ code: 'ValidationFailed' });
    });
  });

  describe('open-ended and empty windows', () => {
    it('answers the same records, with @odata.count, open-ended windows and the OData refusals', async () => {
      const same = await h.ask({ scope, applicationId: APP, startTimestamp: at(10), endTimestamp: at(13), query: {} });
      expect(summarize({ value: same.response!.value })).toEqual(EXPECTED_10_TO_13);
      expect(same.response!['@odata.count']).toBeUndefined();

      // No start: from the beginning; no end: up to now (eve is still connected, so every hour since 13:00 has usage).
      const open = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: null,
        endTimestamp: null,
        query: { $filter: 'startTimestamp lt 2025-03-01T13:00:00Z', $count: 'true' },
      });
      expect(open.response!['@odata.count']).toBe(3);
      expect(summarize({ value: open.response!.value })).toEqual(EXPECTED_10_TO_13);
      const recent = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: Date.now() - 2 * HOUR,
        endTimestamp: null,
        query: { $count: 'true' },
      });
      expect(recent.response!['@odata.count']).toBeGreaterThanOrEqual(2);

      const empty = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: at(10),
        endTimestamp: at(10),
        query: { $count: 'true' },
      });
      expect(empty.response).toEqual({ '@odata.count': 0, value: [] });

      const unknown = await h.ask({
        scope,
        applicationId: APP,
        startTimestamp: at(10),
        endTimestamp: at(13),
        query: { $orderby: 'nope' },
      });
      expect(unknown.err).toMatchObject({ code: 'ValidationFailed', details: [{ field: '$orderby' }] });
      expect(usageQueryErrorCode(unknown.err!.details![0]!.message)).toBe('UnknownProperty');
    });
  });

  describe('tenancy', () => {
    it("gives no records for another organization's application, and each organization its own", async () => {
      expect((await h.query(otherScope, APP, at(0), at(24))).value).toEqual([]);
      expect((await h.query(scope, OTHER_APP, at(0), at(24))).value).toEqual([]);
      expect(summarize(await h.query(otherScope, OTHER_APP, at(0), at(24)))).toEqual({
        [iso(10)]: { messages: 1, minutes: { 921600: 45 } },
      });
      expect(summarize(await h.query(operator, APP, at(10), at(13)))).toEqual(EXPECTED_10_TO_13);
      const anonymous = await h.ask({
        scope: { organizationId: null, operator: false, principal: 'x' },
        applicationId: APP,
        startTimestamp: at(10),
        endTimestamp: at(13),
        query: {},
      });
      expect(anonymous.err).toMatchObject({ code: 'Forbidden' });
    });
  });

  describe('redelivery and replay', () => {
    it('re-publishing the same events (new Nats-Msg-Id, same event ids) changes nothing', async () => {
      const before = await h.ledger();
      await h.publishAll(session, (e) => `${e.event.id}#replay`);
      await h.drained();
      expect(await h.ledger()).toEqual(before);
      expect(summarize(await h.query(scope, APP, at(10), at(13)))).toEqual(EXPECTED_10_TO_13);
    });

    it('replaying the whole stream from a new durable consumer changes nothing', async () => {
      const before = await h.ledger();
      // SIGTERM: in-flight work finishes, then a clean exit.
      expect(await service!.stop()).toEqual({ code: 0, signal: null });
      const jsm = await h.jsm();
      await jsm.consumers.delete(eventStreamName(ns), 'usage-aggregator');
      await start();
      await h.drained();
      const info = await jsm.consumers.info(eventStreamName(ns), 'usage-aggregator');
      const stream = await jsm.streams.info(eventStreamName(ns));
      expect(info.delivered.stream_seq).toBe(stream.state.last_seq);
      expect(await h.ledger()).toEqual(before);
      expect(summarize(await h.query(scope, APP, at(10), at(13)))).toEqual(EXPECTED_10_TO_13);
    });
  });

  describe('a durable consumer deleted under a running aggregator', () => {
    it('is re-created: the replay changes nothing and new events still count', async () => {
      const before = await h.ledger();
      const jsm = await h.jsm();
      const { created } = await jsm.consumers.info(eventStreamName(ns), 'usage-aggregator');
      await jsm.consumers.delete(eventStreamName(ns), 'usage-aggregator');
      await waitFor(
        async () => (await jsm.consumers.info(eventStreamName(ns), 'usage-aggregator')).created !== created,
        {
          timeoutMs: 30000,
          description: 'the aggregator to re-create its consumer',
        },
      );
      await h.drained();
      expect(await h.ledger()).toEqual(before);
      const late = participant(APP, ORG, 'late', false);
      await h.publish(messageEvent('channel.client.message', late, at(12, 40)));
      await h.drained();
      expect(summarize(await h.query(scope, APP, at(12), at(13)))).toEqual({
        [iso(12)]: { ...EXPECTED_10_TO_13[iso(12)], messages: 1 },
      });
    }, 60000);
  });

  describe('a crash in the middle of the stream', () => {
    it('SIGKILL while applying a backlog, more events while down, restart: totals still exact', async () => {
      const KILL_APP = 'app-kill';
      const { phase1, phase2, expected } = backlogScenario(KILL_APP, ORG);
      await service!.stop();
      await h.publishAll(phase1);
      const total = (await (await h.jsm()).streams.info(eventStreamName(ns))).state.last_seq;
      const processedBefore = await h.processedCount();
      const victim = await start();
      await waitFor(async () => (await h.processedCount()) >= processedBefore + 50, {
        timeoutMs: 30000,
        intervalMs: 5,
        description: 'the aggregator to start on the backlog',
      });
      await victim.stop('SIGKILL');
      await h.publishAll(phase2);
      expect((await (await h.jsm()).streams.info(eventStreamName(ns))).state.last_seq).toBe(total + phase2.length);
      await start();
      await h.drained(90000);

      const answer = await h.query(scope, KILL_APP, at(9), at(11));
      expect(summarize(answer)).toEqual(expected);
      // Every applied event was recorded exactly once.
      const [{ n }] = (await h.sql<{ n: number }>('SELECT count(*)::int AS n FROM usage.processed_event')) as [
        { n: number },
      ];
      expect(n).toBe(processedBefore + phase1.length + phase2.length);
      // And the earlier session is untouched.
      expect(summarize(await h.query(scope, APP, at(10), at(12)))).toEqual({
        [iso(10)]: EXPECTED_10_TO_13[iso(10)],
        [iso(11)]: EXPECTED_10_TO_13[iso(11)],
      });
    }, 180000);
  });
});
