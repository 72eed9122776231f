/**
 * Tenancy: a second organization's key gets 404, exactly like for a missing record, on every
 * single-record route of the first organization's records, changes nothing, and never sees the
 * first organization's rows in any list.
 */
import { randomUUID } from 'node:crypto';
import { InterfaceBValidators } from '@switchboard/contracts';
import type { Answer } from '../e2e/http.js';
import { q, startManagement, type Harness } from './support.js';

const ACTIONS: Array<[string, Record<string, unknown>]> = [
  ['Token', {}],
  ['SendMessage', { message: {} }],
  ['SendUserMessage', { message: {}, userId: 'u' }],
  ['SendDeviceMessage', { message: {}, userId: 'u', deviceId: 'd' }],
  ['SendClientMessage', { message: {}, userId: 'u', deviceId: 'd', clientId: 'c' }],
  ['SendChannelMessage', { channelId: 'ch', message: {} }],
  ['SendChannelUserMessage', { channelId: 'ch', userId: 'u', message: {} }],
  ['SendChannelDeviceMessage', { channelId: 'ch', userId: 'u', deviceId: 'd', message: {} }],
  ['SendChannelClientMessage', { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c', message: {} }],
  ['KickChannel', { channelId: 'ch' }],
  ['KickUser', { channelId: 'ch', userId: 'u' }],
  ['KickDevice', { channelId: 'ch', userId: 'u', deviceId: 'd' }],
  ['KickClient', { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c' }],
  ['KickConnection', { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c', connectionId: 'cn' }],
  ['UpdateChannel', { channelId: 'ch', config: {} }],
  ['UpdateUser', { channelId: 'ch', userId: 'u', config: {} }],
  ['UpdateDevice', { channelId: 'ch', userId: 'u', deviceId: 'd', config: {} }],
  ['UpdateClient', { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c', config: {} }],
  ['UpdateConnection', { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c', connectionId: 'cn', config: {} }],
];

describe('tenancy', () => {
  let h: Harness;
  const ids: Record<string, string> = {};
  let applicationId: string;

  beforeAll(async () => {
    h = await startManagement('tenancy');
    const post = async (path: string, body: unknown) => {
      const answer = await h.api('POST', path, { body });
      expect(answer.status).toBe(201);
      return answer.body.id as string;
    };
    applicationId = `${h.ns}-mine`.replace(/_/g, '-');
    ids.ApiKeys = await post('/ApiKeys', { tag: 'mine' });
    ids.ApplicationConfigs = await post('/ApplicationConfigs', { applicationId, tag: 'mine' });
    ids.ApplicationWebhooks = await post('/ApplicationWebhooks', {
      applicationConfigId: ids.ApplicationConfigs,
      name: 'mine',
    });
    ids.ChannelConfigs = await post('/ChannelConfigs', {
      applicationConfigId: ids.ApplicationConfigs,
      channelIdPattern: '*',
    });
    ids.ChannelWebhooks = await post('/ChannelWebhooks', { channelConfigId: ids.ChannelConfigs, name: 'mine' });
    ids.PaymentMethods = await post('/PaymentMethods', { type: 'card', card: { number: '4242424242424242' } });
    ids.Organizations = h.orgA;
    ids.Subscriptions = randomUUID();
    ids.UserAccounts = randomUUID();
    const now = Date.now();
    await h.sql(
      `INSERT INTO management.subscription (id, organization_id, status, created_on, modified_on) VALUES ($1, $2, 'active', $3, $3)`,
      [ids.Subscriptions, h.orgA, now],
    );
    await h.sql(
      `INSERT INTO management.user_account (id, organization_id, first_name, created_on, modified_on) VALUES ($1, $2, 'Ada', $3, $3)`,
      [ids.UserAccounts, h.orgA, now],
    );
    ids.ChangeRecords = (await h.api('GET', `/ChangeRecords${q({ $top: 1 })}`)).body.value[0].id;
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** Both answers are the same 404 OData error (the message names the id asked for, nothing else). */
  function expectSame404(theirs: Answer<any>, missing: Answer<any>, route: string) {
    expect({ route, status: theirs.status, code: theirs.body?.error?.code }).toEqual({
      route,
      status: 404,
      code: 'NotFound',
    });
    expect({ route, status: missing.status, code: missing.body?.error?.code }).toEqual({
      route,
      status: 404,
      code: 'NotFound',
    });
    expect(Object.keys(theirs.body.error).sort()).toEqual(Object.keys(missing.body.error).sort());
    expect(theirs.body.error.target).toEqual(missing.body.error.target);
  }

  const bodies: Record<string, unknown> = {
    ApiKeys: { tag: 'stolen' },
    ApplicationConfigs: { tag: 'stolen' },
    ApplicationWebhooks: { name: 'stolen' },
    ChannelConfigs: { priority: 99 },
    ChannelWebhooks: { name: 'stolen' },
    PaymentMethods: { status: 'stolen' },
    Organizations: { name: 'stolen' },
    Subscriptions: { status: 'stolen' },
    UserAccounts: { firstName: 'stolen' },
  };

  it('answers 404 like a missing record on GET, PUT and PATCH of every entity set, and changes nothing', async () => {
    for (const set of Object.keys(bodies)) {
      for (const method of ['GET', 'PUT', 'PATCH']) {
        const body = method === 'GET' ? undefined : bodies[set];
        const theirs = await h.api(method, `/${set}/${ids[set]}`, { key: h.keyB, body });
        const missing = await h.api(method, `/${set}/${randomUUID()}`, { key: h.keyB, body });
        expectSame404(theirs, missing, `${method} /${set}/{id}`);
      }
      const $select = await h.api('GET', `/${set}/${ids[set]}${q({ $select: 'id' })}`, { key: h.keyB });
      expect($select.status).toBe(404);
      const mine = await h.api('GET', `/${set}/${ids[set]}`);
      expect({ set, status: mine.status }).toEqual({ set, status: 200 });
      expect(JSON.stringify(mine.body)).not.toContain('stolen');
      expect(mine.body.priority ?? 0).not.toBe(99);
    }
    const log = await h.api('GET', `/ChangeRecords/${ids.ChangeRecords}`, { key: h.keyB });
    expectSame404(
      log,
      await h.api('GET', `/ChangeRecords/${randomUUID()}`, { key: h.keyB }),
      'GET /ChangeRecords/{id}',
    );
  });

  it('answers 404 like a missing config on every action', async () => {
    for (const [action, body] of ACTIONS) {
      const theirs = await h.api('POST', `/ApplicationConfigs/${ids.ApplicationConfigs}/${action}`, {
        key: h.keyB,
        body,
      });
      const missing = await h.api('POST', `/ApplicationConfigs/${randomUUID()}/${action}`, { key: h.keyB, body });
      expectSame404(theirs, missing, `POST /ApplicationConfigs/{id}/${action}`);
    }
  });

  it("answers 404 like a missing application on the forwarded reads of the first organization's application", async () => {
    const r = randomUUID();
    const routes = [
      ['GET', `/Usage${q({ applicationId: '%APP%' })}`],
      ['GET', '/ChannelRecordings/%APP%'],
      ['GET', `/ChannelRecordings/%APP%/lobby/${r}`],
      ['DELETE', `/ChannelRecordings/%APP%/lobby/${r}`],
      ['GET', `/ChannelRecordings/%APP%/lobby/${r}/MuxJson`],
      ['GET', `/ChannelRecordings/%APP%/lobby/${r}/Url`],
      ['GET', `/ChannelRecordings/%APP%/lobby/${r}/AudioUrl`],
      ['GET', `/ChannelRecordings/%APP%/lobby/${r}/VideoUrl`],
      ['GET', '/ConnectionRecordings/%APP%'],
      ['GET', `/ConnectionRecordings/%APP%/${r}`],
      ['GET', `/ConnectionRecordings/%APP%/${r}/Url`],
      ['GET', `/ConnectionRecordings/%APP%/${r}/AudioUrl`],
      ['GET', `/ConnectionRecordings/%APP%/${r}/VideoUrl`],
      ['GET', '/RecordingStorage/UsedSize/%APP%'],
    ] as const;
    for (const [method, path] of routes) {
      const theirs = await h.api(method, path.replace('%APP%', applicationId), { key: h.keyB });
      const missing = await h.api(method, path.replace('%APP%', 'no-such-application'), { key: h.keyB });
      expectSame404(theirs, missing, `${method} ${path}`);
    }
  });

  it('reads every record and list in the shape of its contract schema', async () => {
    const schemas: Record<string, keyof typeof InterfaceBValidators> = {
      ApiKeys: 'ApiKey',
      ApplicationConfigs: 'ApplicationConfig',
      ApplicationWebhooks: 'ApplicationWebhook',
      ChannelConfigs: 'ChannelConfig',
      ChannelWebhooks: 'ChannelWebhook',
      ChangeRecords: 'ChangeRecord',
      Organizations: 'Organization',
      PaymentMethods: 'PaymentMethod',
      Subscriptions: 'Subscription',
      UserAccounts: 'UserAccount',
    };
    for (const [set, schema] of Object.entries(schemas)) {
      const one = await h.api('GET', `/${set}/${ids[set]}`);
      expect({ set, errors: InterfaceBValidators[schema].errors(one.body) }).toEqual({ set, errors: [] });
      const list = await h.api('GET', `/${set}${q({ $count: true })}`);
      expect({
        set,
        errors: InterfaceBValidators[`${schema}List` as keyof typeof InterfaceBValidators].errors(list.body),
      }).toEqual({ set, errors: [] });
    }
    const expanded = await h.api('GET', `/ApplicationConfigs/${ids.ApplicationConfigs}${q({ $expand: 'webhooks' })}`);
    expect(InterfaceBValidators.ApplicationConfig.errors(expanded.body)).toEqual([]);
    expect(expanded.body.webhooks).toHaveLength(1);
  });

  it("never lists the first organization's rows, not even when asked by parent or by filter", async () => {
    for (const set of [
      'ApiKeys',
      'ApplicationConfigs',
      'ApplicationWebhooks',
      'ChannelConfigs',
      'ChannelWebhooks',
      'ChangeRecords',
      'Organizations',
      'PaymentMethods',
      'Subscriptions',
      'UserAccounts',
    ]) {
      const theirs = await h.api('GET', `/${set}${q({ $count: true, $top: 1000 })}`, { key: h.keyB });
      expect({ set, status: theirs.status }).toEqual({ set, status: 200 });
      const shown = new Set(theirs.body.value.map((r: any) => r.id));
      for (const id of Object.values(ids)) expect({ set, leaked: shown.has(id) }).toEqual({ set, leaked: false });
      const filtered = await h.api('GET', `/${set}${q({ $filter: `id eq ${ids[set]}`, $count: true })}`, {
        key: h.keyB,
      });
      expect({ set, body: filtered.body }).toEqual({ set, body: { '@odata.count': 0, value: [] } });
      const mine = await h.api('GET', `/${set}${q({ $filter: `id eq ${ids[set]}`, $count: true })}`);
      expect({ set, count: mine.body['@odata.count'] }).toEqual({ set, count: 1 });
    }
    const organizations = await h.api('GET', '/Organizations', { key: h.keyB });
    expect(organizations.body.value.map((o: any) => o.id)).toEqual([h.orgB]);
    expect(
      (await h.api('GET', `/ApplicationWebhooks${q({ applicationConfigId: ids.ApplicationConfigs })}`, { key: h.keyB }))
        .status,
    ).toBe(404);
    expect(
      (await h.api('GET', `/ChannelConfigs${q({ applicationConfigId: ids.ApplicationConfigs })}`, { key: h.keyB }))
        .status,
    ).toBe(404);
    expect(
      (await h.api('GET', `/ChannelWebhooks${q({ channelConfigId: ids.ChannelConfigs })}`, { key: h.keyB })).status,
    ).toBe(404);
  });

  it("refuses to attach records to the first organization's parents", async () => {
    const webhook = await h.api('POST', '/ApplicationWebhooks', {
      key: h.keyB,
      body: { applicationConfigId: ids.ApplicationConfigs },
    });
    expect({ status: webhook.status, target: webhook.body.error.target }).toEqual({
      status: 400,
      target: 'applicationConfigId',
    });
    const config = await h.api('POST', '/ChannelConfigs', {
      key: h.keyB,
      body: { applicationConfigId: ids.ApplicationConfigs, channelIdPattern: '*' },
    });
    expect({ status: config.status, target: config.body.error.target }).toEqual({
      status: 400,
      target: 'applicationConfigId',
    });
    const hook = await h.api('POST', '/ChannelWebhooks', {
      key: h.keyB,
      body: { channelConfigId: ids.ChannelConfigs },
    });
    expect({ status: hook.status, target: hook.body.error.target }).toEqual({ status: 400, target: 'channelConfigId' });
    const own = await h.api('POST', '/ApplicationConfigs', {
      key: h.keyB,
      body: { applicationId: `${applicationId}-b` },
    });
    const moved = await h.api('PATCH', `/ApplicationWebhooks/${ids.ApplicationWebhooks}`, {
      key: h.keyB,
      body: { applicationConfigId: own.body.id },
    });
    expect(moved.status).toBe(404);
    const [row] = await h.sql(
      'SELECT count(*)::int AS n FROM management.application_webhook WHERE organization_id = $1',
      [h.orgB],
    );
    expect(row.n).toBe(0);
  });
});
