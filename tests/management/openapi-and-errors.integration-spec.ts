/** The served OpenAPI document and the HTTP edges every operation shares (auth, api-version, errors). */
import { expectODataError } from '../e2e/http.js';
import { q, startManagement, type Harness } from './support.js';

describe('OpenAPI document and shared HTTP behaviour', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startManagement('openapi');
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('serves the document without credentials, covering every entity set and action', async () => {
    const doc = await h.api('GET', '/openapi.json', { key: null });
    expect(doc.status).toBe(200);
    const paths = Object.keys(doc.body.paths);
    for (const path of [
      '/ApiKeys/{id}',
      '/ApplicationConfigs/{id}',
      '/ApplicationConfigs/{id}/Token',
      '/ApplicationConfigs/{id}/UpdateConnection',
      '/ApplicationWebhooks/{id}',
      '/ChannelConfigs/{id}',
      '/ChannelWebhooks/{id}',
      '/ChangeRecords/{id}',
      '/Usage',
      '/ChannelRecordings/{applicationId}/{channelId}/{channelRecordingId}/MuxJson',
      '/ConnectionRecordings/{applicationId}/{connectionRecordingId}/VideoUrl',
      '/Organizations/{id}',
      '/PaymentMethods/{id}',
      '/RecordingStorage/UsedSize/{applicationId}',
      '/Subscriptions/{id}',
      '/UserAccounts/{id}',
    ]) {
      expect(paths).toContain(path);
    }
    expect(paths.filter((p) => p.startsWith('/ApplicationConfigs/{id}/'))).toHaveLength(19);
    expect(doc.body.components.securitySchemes).toEqual({
      ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      oauth2: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
    });
  });

  it('requires a key on every entity set and action, and checks api-version everywhere', async () => {
    for (const path of [
      '/ApiKeys',
      '/ApplicationConfigs',
      '/ApplicationWebhooks',
      '/ChannelConfigs',
      '/ChannelWebhooks',
      '/ChangeRecords',
      '/Organizations',
      '/PaymentMethods',
      '/Subscriptions',
      '/UserAccounts',
      '/RecordingStorage/UsedSize',
    ]) {
      expectODataError(await h.api('GET', path, { key: null }), 401, 'Unauthorized');
      expectODataError(
        await h.api('GET', `${path}${q({ 'api-version': '2.0' })}`),
        400,
        'ValidationFailed',
        'api-version',
      );
      expect((await h.api('GET', `${path}${q({ 'api-version': '1.0' })}`)).status).toBe(200);
    }
    expectODataError(
      await h.api('POST', '/ApplicationConfigs/00000000-0000-4000-8000-000000000000/Token', { key: null, body: {} }),
      401,
      'Unauthorized',
    );
  });

  it('answers every failure as an OData error body, never a stack trace or SQL', async () => {
    expectODataError(await h.api('GET', '/NoSuchSet'), 404, 'NotFound');
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', {
        raw: '{"applicationId":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'ValidationFailed',
    );
    const injected = await h.api(
      'GET',
      `/ApplicationConfigs${q({ $filter: "tag eq '''; DROP TABLE management.api_key; --'", $count: true })}`,
    );
    expect(injected.body).toEqual({ '@odata.count': 0, value: [] });
    expect((await h.api('GET', '/ApiKeys')).status).toBe(200);
    for (const filter of [
      'tag eq',
      "contains(tag,'%') or (",
      'not not not',
      `${'('.repeat(5000)}true${')'.repeat(5000)}`,
      "tag eq 'x' and applicationId eq 5",
    ]) {
      const bad = await h.api('GET', `/ApplicationConfigs${q({ $filter: filter })}`);
      expect({ filter: filter.slice(0, 40), status: bad.status }).toEqual({ filter: filter.slice(0, 40), status: 400 });
      expect(bad.body.error.target).toBe('$filter');
      expect(bad.text).not.toMatch(/\bat .*\.(js|ts):\d+|SELECT |INSERT |QueryFailedError/);
    }
  });
});
