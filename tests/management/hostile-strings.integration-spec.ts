/**
 * Interface B against text PostgreSQL cannot store (U+0000, lone surrogates) and integers beyond
 * what JSON carries exactly: every entry (body, path, query) answers a 400 ValidationFailed naming
 * the field, nothing is written and nothing is forwarded to the runtime.
 */
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { testServers } from '@switchboard/testing';
import { expectODataError, type Answer } from '../e2e/http.js';
import { q, startManagement, type Harness } from './support.js';

const NUL = 'must not contain U+0000 (NUL)';
const SURROGATE = 'must be well-formed Unicode (no lone surrogate)';
const TOO_BIG = '9223372036854775808';
const IDENTITY = {
  id: 'google|1',
  emailAddress: null,
  firstName: null,
  lastName: null,
  username: null,
  nickname: null,
  phoneNumber: null,
  pictureUrl: null,
  role: 'member',
  createdOn: 1,
  modifiedOn: 1,
};

describe('interface B refuses unstorable strings and out-of-range integers', () => {
  let h: Harness;
  let nc: NatsConnection;
  let forwarded: Subscription;
  let forwardedCount = 0;
  let userId: string;
  let subscriptionId: string;

  beforeAll(async () => {
    h = await startManagement('hostile');
    nc = await connect({ servers: testServers().natsUrl });
    forwarded = nc.subscribe(`${h.ns}.runtime-registry.v1.command`, { callback: () => void forwardedCount++ });
    userId = randomUUID();
    subscriptionId = randomUUID();
    const now = Date.now();
    await h.sql(
      `INSERT INTO management.user_account (id, organization_id, first_name, role, last_svc_web_download_date, created_on, modified_on) VALUES ($1, $2, 'Ada', 'owner', 1700000000000, $3, $3)`,
      [userId, h.orgA, now],
    );
    await h.sql(
      `INSERT INTO management.subscription (id, organization_id, status, platform_plan, support_plan, activated_on, created_on, modified_on) VALUES ($1, $2, 'active', '{}', '{}', $3, $3, $3)`,
      [subscriptionId, h.orgA, now],
    );
  });

  afterAll(async () => {
    forwarded?.unsubscribe();
    await nc?.close();
    await h?.stop();
  });

  function expectRefused(answer: Answer<any>, target: string, message?: string) {
    expectODataError(answer, 400, 'ValidationFailed', target);
    if (message) expect(answer.body.error.details).toEqual([{ code: 'ValidationFailed', message, target }]);
  }

  describe('strings of request bodies', () => {
    it.each([
      ['a NUL', 'a\u0000b', NUL],
      ['a lone high surrogate', 'a\ud800', SURROGATE],
      ['a lone low surrogate', '\udc00b', SURROGATE],
    ])('refuses %s in an API key tag and stores nothing', async (_case, tag, message) => {
      const before = await h.sql('SELECT count(*)::int AS n FROM management.api_key');
      expectRefused(await h.api('POST', '/ApiKeys', { body: { tag } }), 'tag', message);
      expect(await h.sql('SELECT count(*)::int AS n FROM management.api_key')).toEqual(before);
    });

    it('refuses a NUL nested in an array of a record, naming its path, and keeps the record', async () => {
      const patch = await h.api('PATCH', `/UserAccounts/${userId}`, {
        body: { firstName: 'Ok', identities: [{ ...IDENTITY, emailAddress: 'x\u0000@example.com' }] },
      });
      expectRefused(patch, 'identities[0].emailAddress', NUL);
      expect(await h.sql('SELECT first_name FROM management.user_account WHERE id = $1', [userId])).toEqual([
        { first_name: 'Ada' },
      ]);
    });

    it('refuses a NUL in the message of an action without forwarding it to the runtime', async () => {
      const config = await h.api('POST', '/ApplicationConfigs', { body: { applicationId: 'hostile-app' } });
      expect(config.status).toBe(201);
      expectRefused(
        await h.api('POST', `/ApplicationConfigs/${config.body.id}/SendMessage`, {
          body: { message: { message: 'x\u0000y' } },
        }),
        'message.message',
        NUL,
      );
      expectRefused(
        await h.api('POST', `/ApplicationConfigs/${config.body.id}/SendMessage`, {
          body: { message: { message: 'ok', userAlias: '\ud800' } },
        }),
        'message.userAlias',
        SURROGATE,
      );
      await nc.flush();
      expect(forwardedCount).toBe(0);
    });

    it('still stores astral characters (emoji)', async () => {
      const created = await h.api('POST', '/ApiKeys', { body: { tag: 'party \u{1F389}' } });
      expect(created.status).toBe(201);
      expect((await h.api('GET', `/ApiKeys/${created.body.id}`)).body.tag).toBe('party \u{1F389}');
    });
  });

  describe('integers beyond the exact range of JSON numbers', () => {
    it.each(['lastSvcWebDownloadDate', 'lastSvcIosDownloadDate'])(
      'refuses an overflowing %s on UserAccounts and keeps the stored value',
      async (field) => {
        expectRefused(
          await h.api('PATCH', `/UserAccounts/${userId}`, {
            raw: `{"${field}":${TOO_BIG}}`,
            headers: { 'content-type': 'application/json' },
          }),
          field,
        );
        expectRefused(
          await h.api('PATCH', `/UserAccounts/${userId}`, {
            raw: `{"${field}":-${TOO_BIG}}`,
            headers: { 'content-type': 'application/json' },
          }),
          field,
        );
        expect(
          await h.sql('SELECT last_svc_web_download_date::text AS web FROM management.user_account WHERE id = $1', [
            userId,
          ]),
        ).toEqual([{ web: '1700000000000' }]);
      },
    );

    it.each(['activatedOn', 'trialEndOn', 'nextBillingOn', 'cancelledOn'])(
      'refuses an overflowing %s on Subscriptions',
      async (field) => {
        expectRefused(
          await h.api('PATCH', `/Subscriptions/${subscriptionId}`, {
            raw: `{"${field}":${TOO_BIG}}`,
            headers: { 'content-type': 'application/json' },
          }),
          field,
        );
        expect(
          (await h.api('PATCH', `/Subscriptions/${subscriptionId}`, { body: { [field]: Number.MAX_SAFE_INTEGER } }))
            .status,
        ).toBe(200);
      },
    );

    it('refuses an int32 column value beyond int32 (ChannelConfigs priority)', async () => {
      const config = await h.api('POST', '/ApplicationConfigs', { body: { applicationId: 'hostile-int32' } });
      expectRefused(
        await h.api('POST', '/ChannelConfigs', {
          body: { applicationConfigId: config.body.id, channelIdPattern: 'x', priority: 2 ** 31 },
        }),
        'priority',
      );
    });
  });

  describe('path and query parameters', () => {
    const recording = randomUUID();
    it.each([
      ['/ApiKeys/%00', 'id'],
      ['/UserAccounts/a%00b', 'id'],
      ['/ChannelRecordings/%00', 'applicationId'],
      [`/ChannelRecordings/app/%00/${recording}`, 'channelId'],
      [`/ChannelRecordings/app/ch/%00/Url`, 'channelRecordingId'],
      ['/RecordingStorage/UsedSize/%00', 'applicationId'],
      [`/ConnectionRecordings/%00/${recording}`, 'applicationId'],
      [`/ConnectionRecordings/%00/${recording}/AudioUrl`, 'applicationId'],
    ])('GET %s is a 400 naming %s', async (path, param) => {
      expectRefused(await h.api('GET', path), param, NUL);
    });

    it('refuses a path id longer than 256 characters, naming the parameter', async () => {
      expectRefused(
        await h.api('GET', `/ChannelRecordings/${'x'.repeat(257)}`),
        'applicationId',
        'must be at most 256 characters',
      );
    });

    it('refuses a NUL in a $filter string literal and in a plain query parameter, naming the option', async () => {
      expectRefused(await h.api('GET', `/ApiKeys${q({ $filter: "tag eq 'a\u0000b'" })}`), '$filter', NUL);
      expectRefused(
        await h.api('GET', `/ChannelConfigs${q({ applicationConfigId: 'x\u0000' })}`),
        'applicationConfigId',
        NUL,
      );
      expectRefused(
        await h.api('GET', `/ChannelRecordings/app${q({ $filter: "channelId eq '\u0000'" })}`),
        '$filter',
        NUL,
      );
    });
  });
});
