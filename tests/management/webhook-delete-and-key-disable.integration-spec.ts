/**
 * Deleting application and channel webhooks, and disabling a single API key, on real PostgreSQL.
 * The key cache is long here: a disabled key refused at once proves the service forgot its verdict.
 */
import assert from 'node:assert/strict';
import { expectODataError } from '../e2e/http.js';
import { changesOf, startManagement, type Harness } from './support.js';

describe('webhook delete and API key disable', () => {
  let h: Harness;
  let configId: string;
  beforeAll(async () => {
    h = await startManagement('hookdel', { API_KEY_CACHE_TTL_MS: '300000' });
    const config = await h.api('POST', '/ApplicationConfigs', { body: { applicationId: 'hookdel-app' } });
    assert.equal(config.status, 201);
    configId = config.body.id;
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('DELETE /ApplicationWebhooks/{id}: 204, gone from reads, a Delete change record; another organization gets 404', async () => {
    const created = await h.api('POST', '/ApplicationWebhooks', {
      body: { applicationConfigId: configId, url: 'https://hooks.example.com/a', name: 'to delete' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expectODataError(await h.api('DELETE', `/ApplicationWebhooks/${id}`, { key: h.keyB }), 404, 'NotFound');
    expect((await h.api('GET', `/ApplicationWebhooks/${id}`)).status).toBe(200);

    const deleted = await h.api('DELETE', `/ApplicationWebhooks/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectODataError(await h.api('GET', `/ApplicationWebhooks/${id}`), 404, 'NotFound');
    const listed = await h.api('GET', `/ApplicationWebhooks?applicationConfigId=${configId}`);
    expect(listed.body.value.map((w: { id: string }) => w.id)).not.toContain(id);
    expectODataError(await h.api('DELETE', `/ApplicationWebhooks/${id}`), 404, 'NotFound');
    const log = await changesOf(h, id);
    expect(log.filter((c) => c.type === 'Delete').map((c) => [c.propertyName, c.oldValue, c.newValue])).toEqual(
      expect.arrayContaining([
        ['name', 'to delete', null],
        ['url', 'https://hooks.example.com/a', null],
      ]),
    );
  });

  it('DELETE /ChannelWebhooks/{id}: 204 and gone; the channel config keeps its other webhooks', async () => {
    const channelConfig = await h.api('POST', '/ChannelConfigs', {
      body: { applicationConfigId: configId, channelIdPattern: 'room-1' },
    });
    expect(channelConfig.status).toBe(201);
    const ids: string[] = [];
    for (const url of ['https://hooks.example.com/c1', 'https://hooks.example.com/c2']) {
      const hook = await h.api('POST', '/ChannelWebhooks', { body: { channelConfigId: channelConfig.body.id, url } });
      expect(hook.status).toBe(201);
      ids.push(hook.body.id);
    }
    expectODataError(await h.api('DELETE', `/ChannelWebhooks/${ids[0]}`, { key: h.keyB }), 404, 'NotFound');
    expect((await h.api('DELETE', `/ChannelWebhooks/${ids[0]}`)).status).toBe(204);
    expectODataError(await h.api('GET', `/ChannelWebhooks/${ids[0]}`), 404, 'NotFound');
    const left = await h.api('GET', `/ChannelWebhooks?channelConfigId=${channelConfig.body.id}`);
    expect(left.body.value.map((w: { id: string }) => w.id)).toEqual([ids[1]]);
    expect((await changesOf(h, ids[0]!)).some((c) => c.type === 'Delete')).toBe(true);
  });

  it('a disabled key is refused with the 401 of an unknown key, at once; enabled again it works', async () => {
    const created = await h.api('POST', '/ApiKeys', { body: { tag: 'temp' } });
    expect(created.status).toBe(201);
    expect(created.body.disabled).toBe(false);
    const key = created.body.key as string;
    expect((await h.api('GET', '/ApiKeys', { key })).status).toBe(200);

    const disabled = await h.api('PATCH', `/ApiKeys/${created.body.id}`, { body: { disabled: true } });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ id: created.body.id, tag: 'temp', disabled: true, key: null });
    const refused = await h.api('GET', '/ApiKeys', { key });
    const unknown = await h.api('GET', '/ApiKeys', { key: 'sb_not-a-key-of-anyone-at-all' });
    expectODataError(refused, 401, 'Unauthorized');
    expect(refused.body).toEqual(unknown.body);
    // A PUT without `disabled` keeps it.
    const put = await h.api('PUT', `/ApiKeys/${created.body.id}`, { body: { tag: 'renamed' } });
    expect(put.body).toMatchObject({ tag: 'renamed', disabled: true });
    expect((await h.api('GET', `/ApiKeys?$filter=disabled eq true`)).body.value.map((k: any) => k.id)).toEqual([
      created.body.id,
    ]);

    expect((await h.api('PATCH', `/ApiKeys/${created.body.id}`, { body: { disabled: false } })).status).toBe(200);
    expect((await h.api('GET', '/ApiKeys', { key })).status).toBe(200);
    const log = await changesOf(h, created.body.id);
    expect(log.filter((c) => c.propertyName === 'disabled').map((c) => [c.oldValue, c.newValue])).toEqual([
      [null, 'false'],
      ['false', 'true'],
      ['true', 'false'],
    ]);
  });

  it('a key cannot disable itself (409); another organization cannot reach the key (404)', async () => {
    const created = await h.api('POST', '/ApiKeys', { body: { tag: 'self' } });
    const key = created.body.key as string;
    expectODataError(
      await h.api('PATCH', `/ApiKeys/${created.body.id}`, { key, body: { disabled: true } }),
      409,
      'Conflict',
      'disabled',
    );
    expectODataError(
      await h.api('PATCH', `/ApiKeys/${created.body.id}`, { key: h.keyB, body: { disabled: true } }),
      404,
      'NotFound',
    );
    expect((await h.api('GET', '/ApiKeys', { key })).status).toBe(200);
  });
});
