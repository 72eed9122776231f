/** Application configs and application webhooks on real PostgreSQL: CRUD, OData, change log, uniqueness. */
import { expectODataError } from '../e2e/http.js';
import { changeMap, changesOf, expectedWebhook, q, startManagement, type Harness } from './support.js';

describe('application configs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startManagement('appconfigs');
  });
  afterAll(async () => {
    await h?.stop();
  });

  const appId = (suffix: string) => `${h.ns}-${suffix}`.replace(/_/g, '-');

  it('creates a config with a generated shared secret, reads it back, and logs every property with the secret redacted', async () => {
    const created = await h.api('POST', '/ApplicationConfigs', {
      body: { applicationId: appId('one'), tag: 'first', id: 'ignored', organizationId: 'ignored-too' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organizationId: h.orgA,
      disabled: false,
      tag: 'first',
      applicationId: appId('one'),
      sharedSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      webhooks: null,
    });
    const read = await h.api('GET', `/ApplicationConfigs/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    const changes = await changesOf(h, created.body.id);
    expect(changes.every((c) => c.type === 'Create' && c.entityType === 'ApplicationConfig')).toBe(true);
    expect(changeMap(changes, 'Create')).toEqual({
      applicationId: [null, appId('one')],
      disabled: [null, 'false'],
      tag: [null, 'first'],
      sharedSecret: [null, '<redacted>'],
    });
    expect(JSON.stringify(changes)).not.toContain(created.body.sharedSecret);
  });

  it('keeps a given shared secret and refuses a short one', async () => {
    const created = await h.api('POST', '/ApplicationConfigs', {
      body: { applicationId: appId('given'), sharedSecret: 'a-secret-of-mine' },
    });
    expect(created.status).toBe(201);
    expect(created.body.sharedSecret).toBe('a-secret-of-mine');
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: appId('short'), sharedSecret: 'short' } }),
      400,
      'ValidationFailed',
      'sharedSecret',
    );
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', { body: { tag: 'no application id' } }),
      400,
      'ValidationFailed',
      'applicationId',
    );
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: 'has space' } }),
      400,
      'ValidationFailed',
      'applicationId',
    );
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: appId('x'), colour: 'red' } }),
      400,
      'ValidationFailed',
      'colour',
    );
  });

  it('answers 409 for an applicationId another config (of any organization) has', async () => {
    const id = appId('taken');
    expect((await h.api('POST', '/ApplicationConfigs', { body: { applicationId: id } })).status).toBe(201);
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: id } }),
      409,
      'Conflict',
      'applicationId',
    );
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', { key: h.keyB, body: { applicationId: id } }),
      409,
      'Conflict',
      'applicationId',
    );
    const other = await h.api('POST', '/ApplicationConfigs', { body: { applicationId: appId('taken-2') } });
    expectODataError(
      await h.api('PATCH', `/ApplicationConfigs/${other.body.id}`, { body: { applicationId: id } }),
      409,
      'Conflict',
      'applicationId',
    );
    const [row] = await h.sql(
      'SELECT count(*)::int AS n FROM management.change_record WHERE entity_id = $1 AND type = $2',
      [other.body.id, 'Update'],
    );
    expect(row.n).toBe(0);
  });

  it('PUT replaces the writable fields (keeping applicationId and secret when absent), PATCH changes only the given ones, each logged', async () => {
    const created = await h.api('POST', '/ApplicationConfigs', {
      body: { applicationId: appId('put'), tag: 'before', disabled: true },
    });
    const put = await h.api('PUT', `/ApplicationConfigs/${created.body.id}`, { body: { tag: 'after' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...created.body, tag: 'after', disabled: false });
    const patched = await h.api('PATCH', `/ApplicationConfigs/${created.body.id}`, {
      body: { disabled: true, sharedSecret: 'rotated-secret-value' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...put.body, disabled: true, sharedSecret: 'rotated-secret-value' });
    const updates = (await changesOf(h, created.body.id)).filter((c) => c.type === 'Update');
    expect(updates.map((c) => [c.propertyName, c.oldValue, c.newValue])).toEqual([
      ['disabled', 'true', 'false'],
      ['tag', 'before', 'after'],
      ['disabled', 'false', 'true'],
      ['sharedSecret', '<redacted>', '<redacted>'],
    ]);
    for (const c of updates) {
      expect(c.changedBy).toEqual(expect.any(String));
      expect(c.changedOn).toBeGreaterThan(0);
    }
    expect(JSON.stringify(updates)).not.toContain('rotated-secret-value');
  });

  it('creates inline webhooks, expands them with nested options, and replaces the set on PUT', async () => {
    const created = await h.api('POST', '/ApplicationConfigs', {
      body: {
        applicationId: appId('hooks'),
        webhooks: [
          { name: 'alpha', url: 'https://example.com/a', events: ['channel.activated'] },
          { name: 'beta', url: 'https://example.com/b', reliable: true },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // The answer is the created record with its webhooks as written (in the body's order).
    const hook = (fields: Record<string, unknown>) => expectedWebhook({ applicationConfigId: id }, fields);
    expect(created.body.webhooks).toEqual([
      hook({ name: 'alpha', url: 'https://example.com/a', events: ['channel.activated'] }),
      hook({ name: 'beta', url: 'https://example.com/b', reliable: true }),
    ]);
    const asStored = await h.api('GET', `/ApplicationConfigs/${id}${q({ $expand: 'webhooks($orderby=name)' })}`);
    expect(asStored.body).toEqual(created.body);
    // A read without $expand keeps the navigation property null.
    expect((await h.api('GET', `/ApplicationConfigs/${id}`)).body).toEqual({ ...created.body, webhooks: null });
    const expanded = await h.api(
      'GET',
      `/ApplicationConfigs/${id}${q({ $expand: 'webhooks($orderby=name desc;$select=name,reliable)' })}`,
    );
    expect(expanded.status).toBe(200);
    expect(expanded.body.webhooks).toEqual([
      { name: 'beta', reliable: true },
      { name: 'alpha', reliable: false },
    ]);
    const filtered = await h.api(
      'GET',
      `/ApplicationConfigs/${id}${q({ $select: 'applicationId', $expand: "webhooks($filter=name eq 'alpha';$count=true)" })}`,
    );
    expect(filtered.body).toEqual({
      applicationId: appId('hooks'),
      webhooks: [expect.objectContaining({ name: 'alpha', applicationConfigId: id, events: ['channel.activated'] })],
      'webhooks@odata.count': 1,
    });

    const alpha = filtered.body.webhooks[0];
    const put = await h.api('PUT', `/ApplicationConfigs/${id}`, {
      body: { webhooks: [{ id: alpha.id, name: 'alpha2', url: 'https://example.com/a2' }, { name: 'gamma' }] },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      ...created.body,
      tag: null,
      disabled: false,
      webhooks: [
        hook({ id: alpha.id, name: 'alpha2', url: 'https://example.com/a2', createdOn: alpha.createdOn }),
        hook({ name: 'gamma' }),
      ],
    });
    const after = await h.api('GET', `/ApplicationWebhooks${q({ applicationConfigId: id, $orderby: 'name' })}`);
    expect(after.body.value.map((w: any) => w.name)).toEqual(['alpha2', 'gamma']);
    expect(after.body.value[0].id).toBe(alpha.id);
    expect(after.body.value).toEqual(put.body.webhooks);
    // PATCH with webhooks answers them too; without webhooks they stay null in the answer (and untouched).
    const patched = await h.api('PATCH', `/ApplicationConfigs/${id}`, {
      body: { tag: 'patched', webhooks: [{ id: alpha.id, name: 'alpha3' }] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...put.body,
      tag: 'patched',
      webhooks: [hook({ id: alpha.id, name: 'alpha3', createdOn: alpha.createdOn })],
    });
    const untouched = await h.api('PATCH', `/ApplicationConfigs/${id}`, { body: { tag: 'again' } });
    expect(untouched.body).toEqual({ ...patched.body, tag: 'again', webhooks: null });
    expect(
      (await h.api('GET', `/ApplicationWebhooks${q({ applicationConfigId: id })}`)).body.value.map((w: any) => w.name),
    ).toEqual(['alpha3']);
    const emptied = await h.api('PUT', `/ApplicationConfigs/${id}`, { body: { webhooks: [] } });
    expect(emptied.body.webhooks).toEqual([]);
    const deleted = (await h.sql(
      'SELECT entity_id, property_name, old_value, new_value FROM management.change_record WHERE type = $1 AND entity_type = $2',
      ['Delete', 'ApplicationWebhook'],
    )) as any[];
    expect(deleted.find((r) => r.property_name === 'name')).toEqual(
      expect.objectContaining({ old_value: 'beta', new_value: null }),
    );

    expectODataError(
      await h.api('PUT', `/ApplicationConfigs/${id}`, {
        body: { webhooks: [{ id: '00000000-0000-4000-8000-000000000000' }] },
      }),
      400,
      'ValidationFailed',
      'webhooks[0].id',
    );
    expectODataError(
      await h.api('POST', '/ApplicationConfigs', {
        body: { applicationId: appId('badhook'), webhooks: [{ url: 'ftp://x' }] },
      }),
      400,
      'ValidationFailed',
      'webhooks[0].url',
    );
  });

  it('lists with $filter, $orderby, $top, $skip, $count, $select and $expand', async () => {
    for (const [suffix, tag] of [
      ['l1', 'list-c'],
      ['l2', 'list-a'],
      ['l3', 'list-b'],
    ]) {
      expect(
        (
          await h.api('POST', '/ApplicationConfigs', {
            body: { applicationId: appId(suffix), tag, webhooks: [{ name: `${tag}-hook` }] },
          })
        ).status,
      ).toBe(201);
    }
    const page = await h.api(
      'GET',
      `/ApplicationConfigs${q({ $filter: "startswith(tag,'list-')", $orderby: 'tag desc', $top: 2, $skip: 1, $count: true, $select: 'tag,applicationId', $expand: 'webhooks($select=name)' })}`,
    );
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      '@odata.count': 3,
      value: [
        { tag: 'list-b', applicationId: appId('l3'), webhooks: [{ name: 'list-b-hook' }] },
        { tag: 'list-a', applicationId: appId('l2'), webhooks: [{ name: 'list-a-hook' }] },
      ],
    });
    const none = await h.api('GET', `/ApplicationConfigs${q({ $filter: "tag eq 'nope'", $count: true })}`);
    expect(none.body).toEqual({ '@odata.count': 0, value: [] });
  });

  it('answers OData errors for bad options with the option as target', async () => {
    expectODataError(
      await h.api('GET', `/ApplicationConfigs${q({ $filter: 'colour eq 1' })}`),
      400,
      'UnknownProperty',
      '$filter',
    );
    expectODataError(
      await h.api('GET', `/ApplicationConfigs${q({ $filter: "tag eq 'x" })}`),
      400,
      'QuerySyntaxError',
      '$filter',
    );
    expectODataError(await h.api('GET', `/ApplicationConfigs${q({ $top: 5000 })}`), 400, 'QueryLimitExceeded', '$top');
    expectODataError(
      await h.api('GET', `/ApplicationConfigs${q({ $orderby: 'tag,tag,tag,tag,tag,tag' })}`),
      400,
      'QueryLimitExceeded',
      '$orderby',
    );
    expectODataError(
      await h.api('GET', `/ApplicationConfigs${q({ $expand: 'webhooks($expand=a($expand=b))' })}`),
      400,
      'QueryLimitExceeded',
      '$expand',
    );
    // The shared secret can be read but not guessed with a filter.
    expectODataError(
      await h.api('GET', `/ApplicationConfigs${q({ $filter: "startswith(sharedSecret,'a')" })}`),
      400,
      'ValidationFailed',
      '$filter',
    );
    expectODataError(
      await h.api('GET', `/ApplicationConfigs${q({ $orderby: 'sharedSecret' })}`),
      400,
      'ValidationFailed',
      '$orderby',
    );
    const one = await h.api('GET', '/ApplicationConfigs');
    expectODataError(
      await h.api('GET', `/ApplicationConfigs/${one.body.value[0].id}${q({ $filter: 'true' })}`),
      400,
      'QuerySyntaxError',
      '$filter',
    );
  });
});
