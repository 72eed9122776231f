/**
 * The interface B `Usage` list end to end: management-api's `GET /Usage` forwards to
 * usage-aggregator (`usage-aggregator.v1.usage.list`, the one usage subject), which answers from
 * the events it consumed. Real management-api, usage-aggregator, NATS, PostgreSQL and Redis.
 */
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { eventStreamName } from '@switchboard/contracts';
import { flushRedisPrefix, freePort, spawnService, testServers, type SpawnedService } from '@switchboard/testing';
import { startManagement, type Harness as ManagementHarness } from '../management/support.js';
import { connectionEvent, HOUR, messageEvent, MIN, participant, summarize, UsageHarness } from './usage-harness.js';

const at = (h: number, m = 0) => Date.UTC(2025, 4, 2, h, m);
const iso = (h: number) => new Date(at(h)).toISOString();

describe('GET /Usage through management-api', () => {
  let m: ManagementHarness;
  let aggregator: SpawnedService;
  let h: UsageHarness;
  let app: string;

  beforeAll(async () => {
    const servers = testServers();
    m = await startManagement('mgmtusage');
    aggregator = await spawnService('usage-aggregator', {
      ...m.env,
      REDIS_URL: servers.redisUrl,
      REDIS_KEY_PREFIX: `${m.ns}:`,
      HTTP_PORT: String(await freePort()),
    });
    h = new UsageHarness(await connect({ servers: servers.natsUrl }), m.ns, m.db.url);
    app = `${m.ns}-app`.replace(/_/g, '-');
    assert.equal((await m.api('POST', '/ApplicationConfigs', { body: { applicationId: app } })).status, 201);
    // 09:40 to 11:10 with video at 1280x720, one message at 10:05.
    const vera = participant(app, m.orgA, 'vera', true);
    await h.publishAll([
      connectionEvent('connection.connected', vera, at(9, 40), { width: 1280, height: 720 }),
      messageEvent('channel.client.message', vera, at(10, 5)),
      connectionEvent('connection.closed', vera, at(11, 10)),
    ]);
    await h.drained();
  }, 90_000);

  afterAll(async () => {
    await aggregator?.stop();
    await (await h?.jsm())?.streams.delete(eventStreamName(m.ns)).catch(() => undefined);
    await h?.nc.close();
    await flushRedisPrefix(testServers().redisUrl, `${m.ns}:`);
    await m?.stop();
  });

  it('answers exact sums per hour for any window, with the OData options', async () => {
    const answer = await m.api(
      'GET',
      `/Usage?applicationId=${app}&startTimestamp=${at(9)}&endTimestamp=${at(12)}&$count=true`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body['@odata.count']).toBe(3);
    expect(summarize(answer.body)).toEqual({
      [iso(9)]: { messages: 0, minutes: { 921600: 20 } },
      [iso(10)]: { messages: 1, minutes: { 921600: 60 } },
      [iso(11)]: { messages: 0, minutes: { 921600: 10 } },
    });
    // A window inside one hour is widened to it; no bounds at all: everything.
    expect(
      summarize(
        (await m.api('GET', `/Usage?applicationId=${app}&startTimestamp=${at(10, 30)}&endTimestamp=${at(10, 31)}`))
          .body,
      ),
    ).toEqual({
      [iso(10)]: { messages: 1, minutes: { 921600: 60 } },
    });
    const all = (await m.api('GET', `/Usage?applicationId=${app}&$filter=participantMessages gt 0`)).body;
    expect(all.value.map((r: { startTimestamp: string }) => r.startTimestamp)).toEqual([iso(10)]);
    expect(all.value[0].participantMinutes[0].value.usageParticipantMinutes * MIN).toBe(HOUR);
  });

  it('takes $expand (4.B rule 5), bound by usage-aggregator: * expands nothing, a name is 400 UnknownProperty naming it', async () => {
    const window = `/Usage?applicationId=${app}&startTimestamp=${at(9)}&endTimestamp=${at(12)}&$count=true`;
    const plain = await m.api('GET', window);
    expect(plain.status).toBe(200);
    const star = await m.api('GET', `${window}&$expand=*`);
    expect(star.status).toBe(200);
    expect(star.body).toEqual(plain.body);
    const nope = await m.api('GET', `${window}&$expand=nope`);
    expect(nope.status).toBe(400);
    expect(nope.body.error).toMatchObject({ code: 'UnknownProperty', target: '$expand' });
    expect(nope.body.error.message).toContain("'nope'");
  });
});
