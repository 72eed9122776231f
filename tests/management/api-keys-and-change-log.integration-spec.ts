/** API keys (extended with OData and the change log) and the change log itself, on real PostgreSQL. */
import { createHash } from 'node:crypto';
import { ChangeRecord, validator } from '@switchboard/contracts';
import { expectODataError } from '../e2e/http.js';
import { changeMap, changesOf, q, startManagement, type Harness } from './support.js';

describe('API keys and the change log', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startManagement('keys');
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('API keys', () => {
    it('creates a key shown once and stored hashed; reads, PUTs and PATCHes it; logs the value as <redacted>', async () => {
      const created = await h.api('POST', '/ApiKeys', {
        body: { tag: 'ci', key: 'chosen-by-client', createdBy: 'me' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        key: expect.stringMatching(/^sb_[A-Za-z0-9_-]{43}$/),
        tag: 'ci',
        disabled: false,
        id: expect.any(String),
        createdOn: expect.any(Number),
        createdBy: expect.any(String),
        modifiedOn: expect.any(Number),
        modifiedBy: expect.any(String),
      });
      expect(created.body.createdBy).not.toBe('me');
      const [row] = await h.sql('SELECT key_hash FROM management.api_key WHERE id = $1', [created.body.id]);
      expect(row.key_hash).toBe(createHash('sha256').update(created.body.key).digest('hex'));
      expect((await h.api('GET', `/ApiKeys/${created.body.id}`)).body).toEqual({ ...created.body, key: null });
      // The new key works.
      expect((await h.api('GET', '/ApiKeys', { key: created.body.key })).status).toBe(200);

      const put = await h.api('PUT', `/ApiKeys/${created.body.id}`, { body: {} });
      expect(put.body).toEqual({ ...created.body, key: null, tag: null, modifiedOn: expect.any(Number) });
      const patch = await h.api('PATCH', `/ApiKeys/${created.body.id}`, { body: { tag: 'deploy' } });
      expect(patch.body.tag).toBe('deploy');
      const untouched = await h.api('PATCH', `/ApiKeys/${created.body.id}`, { body: {} });
      expect(untouched.body.tag).toBe('deploy');

      const log = await changesOf(h, created.body.id);
      expect(log.map((c) => [c.type, c.propertyName, c.oldValue, c.newValue])).toEqual([
        ['Create', 'key', null, '<redacted>'],
        ['Create', 'tag', null, 'ci'],
        ['Create', 'disabled', null, 'false'],
        ['Update', 'tag', 'ci', null],
        ['Update', 'tag', null, 'deploy'],
      ]);
      expect(JSON.stringify(log)).not.toContain(created.body.key);
      const everything = await h.sql(
        `SELECT string_agg(t::text, ' ') AS all FROM (SELECT * FROM management.change_record) t`,
      );
      expect(everything[0].all).not.toContain(created.body.key);
    });

    it('lists with $filter, $orderby, $top, $skip, $count, $select and $expand; the key value is never readable', async () => {
      for (const tag of ['k-b', 'k-c', 'k-a'])
        expect((await h.api('POST', '/ApiKeys', { body: { tag } })).status).toBe(201);
      const page = await h.api(
        'GET',
        `/ApiKeys${q({ $filter: "startswith(tag,'k-')", $orderby: 'tag', $top: 2, $skip: 1, $count: true, $select: 'tag,key', $expand: '*' })}`,
      );
      expect(page.status).toBe(200);
      expect(page.body).toEqual({
        '@odata.count': 3,
        value: [
          { tag: 'k-b', key: null },
          { tag: 'k-c', key: null },
        ],
      });
      const all = await h.api('GET', '/ApiKeys');
      for (const k of all.body.value) expect(k.key).toBeNull();
      expectODataError(
        await h.api('GET', `/ApiKeys${q({ $filter: "key eq 'sb_x'" })}`),
        400,
        'ValidationFailed',
        '$filter',
      );
      expectODataError(await h.api('GET', `/ApiKeys${q({ $expand: 'owner' })}`), 400, 'UnknownProperty', '$expand');
      expectODataError(await h.api('GET', `/ApiKeys${q({ $select: 'secret' })}`), 400, 'UnknownProperty', '$select');
    });
  });

  describe('change records', () => {
    it('are queryable with OData and readable one by one', async () => {
      const app = await h.api('POST', '/ApplicationConfigs', {
        body: { applicationId: `${h.ns}-log`.replace(/_/g, '-'), tag: 'v1' },
      });
      for (const tag of ['v2', 'v3', 'v4'])
        expect((await h.api('PATCH', `/ApplicationConfigs/${app.body.id}`, { body: { tag } })).status).toBe(200);

      const page = await h.api(
        'GET',
        `/ChangeRecords${q({ $filter: `entityId eq '${app.body.id}' and propertyName eq 'tag' and type eq 'Update'`, $orderby: 'newValue desc', $top: 2, $skip: 1, $count: true, $select: 'oldValue,newValue,entityType' })}`,
      );
      expect(page.status).toBe(200);
      expect(page.body).toEqual({
        '@odata.count': 3,
        value: [
          { oldValue: 'v2', newValue: 'v3', entityType: 'ApplicationConfig' },
          { oldValue: 'v1', newValue: 'v2', entityType: 'ApplicationConfig' },
        ],
      });
      const recent = await h.api(
        'GET',
        `/ChangeRecords${q({ $filter: `changedOn ge ${Date.now() - 3_600_000} and entityType eq 'ApplicationConfig'`, $orderby: 'changedOn desc', $top: 1 })}`,
      );
      expect(recent.body.value).toHaveLength(1);

      const [first] = await changesOf(h, app.body.id);
      const one = await h.api('GET', `/ChangeRecords/${first!.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({
        type: 'Create',
        entityType: 'ApplicationConfig',
        entityId: app.body.id,
        propertyName: first!.propertyName,
        oldValue: null,
        newValue: first!.newValue,
        changedOn: expect.any(Number),
        changedBy: expect.any(String),
        id: first!.id,
        createdOn: one.body.changedOn,
        createdBy: one.body.changedBy,
        modifiedOn: one.body.changedOn,
        modifiedBy: one.body.changedBy,
      });
      const keys = await h.api('GET', `/ApiKeys${q({ $filter: `tag eq 'bootstrap operator key'` })}`);
      expect(one.body.changedBy).toBe(keys.body.value[0].id);
      expect((await h.api('GET', `/ChangeRecords/${first!.id}${q({ $select: 'propertyName' })}`)).body).toEqual({
        propertyName: first!.propertyName,
      });
      expectODataError(
        await h.api('GET', `/ChangeRecords${q({ $filter: 'colour eq 1' })}`),
        400,
        'UnknownProperty',
        '$filter',
      );
      // What the log holds is what the published schema says: every record of every change type validates.
      const webhook = await h.api('POST', '/ApplicationWebhooks', {
        body: { applicationConfigId: app.body.id, name: 'short-lived' },
      });
      expect(
        (await h.api('PUT', `/ApplicationConfigs/${app.body.id}`, { body: { tag: 'v4', webhooks: [] } })).status,
      ).toBe(200);
      const log = (await h.api('GET', `/ChangeRecords${q({ $top: 1000 })}`)).body.value as unknown[];
      expect(new Set(log.map((r: any) => r.type))).toEqual(new Set(['Create', 'Update', 'Delete']));
      expect([...new Set((await changesOf(h, webhook.body.id)).map((c) => c.type))]).toEqual(['Create', 'Delete']);
      const schema = validator(ChangeRecord);
      expect(log.flatMap((r) => schema.errors(r))).toEqual([]);
      expectODataError(await h.api('GET', '/ChangeRecords/00000000-0000-4000-8000-000000000000'), 404, 'NotFound');
    });

    it('are written in the transaction of the change: a change that fails leaves neither the change nor its records', async () => {
      const app = await h.api('POST', '/ApplicationConfigs', {
        body: { applicationId: `${h.ns}-atomic`.replace(/_/g, '-'), tag: 'kept' },
      });
      const before = await changesOf(h, app.body.id);
      // The tag update runs first; the bad inline webhook fails after it, inside the same transaction.
      const failed = await h.api('PUT', `/ApplicationConfigs/${app.body.id}`, {
        body: { tag: 'lost', webhooks: [{ id: '00000000-0000-4000-8000-000000000000' }] },
      });
      expectODataError(failed, 400, 'ValidationFailed', 'webhooks[0].id');
      expect((await h.api('GET', `/ApplicationConfigs/${app.body.id}`)).body.tag).toBe('kept');
      expect(await changesOf(h, app.body.id)).toEqual(before);
      expect(changeMap(before, 'Create').tag).toEqual([null, 'kept']);
    });

    it('never shows another organization the log', async () => {
      const theirs = await h.api('GET', `/ChangeRecords${q({ $count: true })}`, { key: h.keyB });
      expect(theirs.body).toEqual({ '@odata.count': 0, value: [] });
      const mine = await h.api('GET', `/ChangeRecords${q({ $top: 1 })}`);
      expectODataError(await h.api('GET', `/ChangeRecords/${mine.body.value[0].id}`, { key: h.keyB }), 404, 'NotFound');
    });
  });
});
