/**
 * The account side on real PostgreSQL: the organization (address, contacts), payment methods (card
 * numbers never stored), subscriptions (plans) and user accounts (identities, SDK download dates).
 */
import { randomUUID } from 'node:crypto';
import { expectODataError } from '../e2e/http.js';
import { changeMap, changesOf, q, startManagement, type Harness } from './support.js';

const VISA = '4111 1111 1111 1111';
const MASTERCARD = '5555555555554444';
const AMEX = '378282246310005';

describe('organization, payment methods, subscriptions, user accounts', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startManagement('account');
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('organization', () => {
    it('lists only the caller organization (every one for the operator key), with address and contacts inline, and updates it with change records', async () => {
      const own = await h.api('GET', '/Organizations', { key: h.keyB });
      expect(own.body.value.map((o: { id: string }) => o.id)).toEqual([h.orgB]);
      const list = await h.api('GET', `/Organizations${q({ $filter: `id eq ${h.orgA}` })}`);
      expect(list.status).toBe(200);
      expect(list.body.value).toHaveLength(1);
      expect(list.body.value[0]).toEqual({
        id: h.orgA,
        name: 'Default organization',
        paymentMethodId: null,
        vatNumber: null,
        industry: null,
        userIds: [],
        createdOn: expect.any(Number),
        modifiedOn: expect.any(Number),
        address: {},
        primaryContact: {},
        additionalContacts: null,
        disabled: false,
      });

      const body = {
        name: 'Acme Streaming',
        vatNumber: 'DE123456789',
        industry: 'Media',
        address: { line1: '1 Main St', city: 'Berlin', country: 'DE', countryFullName: 'Germany' },
        primaryContact: { firstName: 'Ada', lastName: 'Lovelace', emailAddress: 'ada@example.com' },
        additionalContacts: [
          { firstName: 'Grace', lastName: 'Hopper', emailAddress: 'grace@example.com' },
          { firstName: 'Alan', lastName: 'Turing', emailAddress: 'alan@example.com' },
        ],
        userIds: ['ignored'],
        id: 'ignored',
      };
      const put = await h.api('PUT', `/Organizations/${h.orgA}`, { body });
      expect(put.status).toBe(200);
      const { userIds: _u, id: _i, ...written } = body;
      expect(put.body).toEqual({ ...list.body.value[0], ...written, modifiedOn: expect.any(Number) });

      const patch = await h.api('PATCH', `/Organizations/${h.orgA}`, { body: { industry: 'Broadcast' } });
      expect(patch.body).toEqual({ ...put.body, industry: 'Broadcast', modifiedOn: expect.any(Number) });

      const log = await changesOf(h, h.orgA);
      expect(log.every((c) => c.entityType === 'Organization' && c.type === 'Update')).toBe(true);
      expect(log.map((c) => c.propertyName)).toEqual([
        'name',
        'vatNumber',
        'industry',
        'address',
        'primaryContact',
        'additionalContacts',
        'industry',
      ]);
      expect(changeMap(log.slice(0, 3), 'Update')).toEqual({
        name: ['Default organization', 'Acme Streaming'],
        vatNumber: [null, 'DE123456789'],
        industry: [null, 'Media'],
      });
      expect(JSON.parse(log[3]!.newValue)).toEqual(body.address);
    });

    it('takes $select and $expand with nested options for address and contacts, on the list and on the record', async () => {
      const one = await h.api(
        'GET',
        `/Organizations/${h.orgA}${q({ $select: 'name', $expand: "address($select=city),additionalContacts($filter=startswith(firstName,'G');$select=emailAddress)" })}`,
      );
      expect(one.status).toBe(200);
      expect(one.body).toEqual({
        name: 'Acme Streaming',
        address: { city: 'Berlin' },
        additionalContacts: [{ emailAddress: 'grace@example.com' }],
      });
      const list = await h.api(
        'GET',
        `/Organizations${q({ $filter: "industry eq 'Broadcast'", $orderby: 'name', $top: 10, $skip: 0, $count: true, $select: 'id', $expand: 'primaryContact,additionalContacts($orderby=lastName desc;$top=1;$count=true)' })}`,
      );
      expect(list.body).toEqual({
        '@odata.count': 1,
        value: [
          {
            id: h.orgA,
            primaryContact: { firstName: 'Ada', lastName: 'Lovelace', emailAddress: 'ada@example.com' },
            additionalContacts: [{ firstName: 'Alan', lastName: 'Turing', emailAddress: 'alan@example.com' }],
            'additionalContacts@odata.count': 2,
          },
        ],
      });
      expect((await h.api('GET', `/Organizations${q({ $filter: "name eq 'nobody'", $count: true })}`)).body).toEqual({
        '@odata.count': 0,
        value: [],
      });
    });

    it('only links payment methods of the organization', async () => {
      expectODataError(
        await h.api('PATCH', `/Organizations/${h.orgA}`, { body: { paymentMethodId: randomUUID() } }),
        400,
        'ValidationFailed',
        'paymentMethodId',
      );
      const method = await h.api('POST', '/PaymentMethods', { body: { type: 'card', card: { number: VISA } } });
      const linked = await h.api('PATCH', `/Organizations/${h.orgA}`, { body: { paymentMethodId: method.body.id } });
      expect(linked.body.paymentMethodId).toBe(method.body.id);
      const foreign = await h.api('POST', '/PaymentMethods', { key: h.keyB, body: { type: 'card' } });
      expectODataError(
        await h.api('PATCH', `/Organizations/${h.orgA}`, { body: { paymentMethodId: foreign.body.id } }),
        400,
        'ValidationFailed',
        'paymentMethodId',
      );
    });
  });

  describe('payment methods', () => {
    it('keeps only the masked number and the brand of a card, never its number or security code', async () => {
      const created = await h.api('POST', '/PaymentMethods', {
        body: {
          type: 'card',
          status: 'active',
          card: {
            firstName: 'Ada',
            lastName: 'Lovelace',
            number: VISA,
            securityCode: '123',
            expiryMonth: 12,
            expiryYear: 2031,
            maskedNumber: 'forged',
            address: { city: 'London' },
          },
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        organizationId: h.orgA,
        type: 'card',
        status: 'active',
        card: {
          firstName: 'Ada',
          lastName: 'Lovelace',
          brand: 'Visa',
          expiryMonth: 12,
          expiryYear: 2031,
          maskedNumber: '************1111',
          address: { city: 'London' },
        },
        createdOn: expect.any(Number),
        modifiedOn: expect.any(Number),
      });
      expect((await h.api('GET', `/PaymentMethods/${created.body.id}`)).body).toEqual(created.body);

      const rows = await h.sql('SELECT card::text AS card FROM management.payment_method WHERE id = $1', [
        created.body.id,
      ]);
      expect(rows[0].card).not.toMatch(/4111111111111111|4111 1111|"number"|securityCode|"123"/);
      const everything = await h.sql(
        `SELECT string_agg(t::text, ' ') AS all FROM (SELECT * FROM management.change_record) t`,
      );
      expect(everything[0].all).not.toMatch(/4111111111111111|4111 1111 1111 1111/);
      // The database refuses a card number even if code tried to store one.
      await expect(
        h.sql(`UPDATE management.payment_method SET card = card || '{"number":"4111111111111111"}' WHERE id = $1`, [
          created.body.id,
        ]),
      ).rejects.toThrow(/payment_method_card_no_pan/);

      const log = changeMap(await changesOf(h, created.body.id), 'Create');
      expect(Object.keys(log)).toEqual(['type', 'status', 'card']);
      expect(JSON.parse(log.card![1]!)).toEqual(created.body.card);
    });

    it('derives the brand from the number, keeps a given brand, and refuses bad numbers and codes', async () => {
      const mc = await h.api('POST', '/PaymentMethods', { body: { card: { number: MASTERCARD } } });
      expect(mc.body.card).toEqual({ brand: 'Mastercard', maskedNumber: '************4444' });
      const amex = await h.api('POST', '/PaymentMethods', { body: { card: { number: AMEX, brand: 'AmEx' } } });
      expect(amex.body.card).toEqual({ brand: 'AmEx', maskedNumber: '***********0005' });
      expectODataError(
        await h.api('POST', '/PaymentMethods', { body: { card: { number: '4111111111111112' } } }),
        400,
        'ValidationFailed',
        'card.number',
      );
      expectODataError(
        await h.api('POST', '/PaymentMethods', { body: { card: { number: '12ab' } } }),
        400,
        'ValidationFailed',
        'card.number',
      );
      expectODataError(
        await h.api('POST', '/PaymentMethods', { body: { card: { number: VISA, securityCode: '12' } } }),
        400,
        'ValidationFailed',
        'card.securityCode',
      );
      expectODataError(
        await h.api('POST', '/PaymentMethods', { body: { card: { expiryMonth: 13 } } }),
        400,
        'ValidationFailed',
        'card.expiryMonth',
      );
    });

    it('PUT replaces (keeping the masked number unless a new number comes), PATCH merges, each logged', async () => {
      const created = await h.api('POST', '/PaymentMethods', {
        body: { type: 'card', status: 'active', card: { number: VISA, expiryMonth: 1, expiryYear: 2030 } },
      });
      const put = await h.api('PUT', `/PaymentMethods/${created.body.id}`, {
        body: { type: 'card', card: { expiryMonth: 2, expiryYear: 2032 } },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({
        ...created.body,
        status: null,
        card: { expiryMonth: 2, expiryYear: 2032, maskedNumber: '************1111', brand: 'Visa' },
        modifiedOn: expect.any(Number),
      });
      const patch = await h.api('PATCH', `/PaymentMethods/${created.body.id}`, {
        body: { status: 'suspended', card: { number: MASTERCARD, securityCode: '999' } },
      });
      expect(patch.body.card).toEqual({ maskedNumber: '************4444', brand: 'Mastercard' });
      expect(patch.body.status).toBe('suspended');
      expect(patch.text).not.toContain('5555555555554444');
      const updates = (await changesOf(h, created.body.id)).filter((c) => c.type === 'Update');
      expect(updates.map((c) => c.propertyName)).toEqual(['status', 'card', 'status', 'card']);
      expect(JSON.stringify(updates)).not.toMatch(/5555555555554444|"999"/);
    });

    it('lists with filters on the card, $orderby, $top, $skip, $count and $select', async () => {
      const page = await h.api(
        'GET',
        `/PaymentMethods${q({ $filter: "card/brand eq 'Visa' or card/brand eq 'Mastercard'", $orderby: 'card/brand desc,createdOn', $top: 2, $skip: 1, $count: true, $select: 'card/brand,card/maskedNumber' })}`,
      );
      expect(page.status).toBe(200);
      expect(page.body['@odata.count']).toBeGreaterThanOrEqual(3);
      expect(page.body.value).toHaveLength(2);
      for (const v of page.body.value) expect(Object.keys(v)).toEqual(['card']);
      const brands = (
        await h.api(
          'GET',
          `/PaymentMethods${q({ $filter: 'card/brand ne null', $orderby: 'card/brand desc', $select: 'card/brand' })}`,
        )
      ).body.value.map((v: any) => v.card.brand);
      expect(brands).toEqual([...brands].sort((a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0)));
      expectODataError(
        await h.api('GET', `/PaymentMethods${q({ $filter: "card/number eq '1'" })}`),
        400,
        'UnknownProperty',
        '$filter',
      );
    });
  });

  describe('subscriptions', () => {
    let subscriptionId: string;
    beforeAll(async () => {
      subscriptionId = randomUUID();
      const now = Date.now();
      await h.sql(
        `INSERT INTO management.subscription (id, organization_id, status, billing_unit, platform_plan, support_plan, enabled_features, activated_on, created_on, modified_on)
         VALUES ($1, $2, 'active', 'month', $3, $4, $5, $6, $6, $6)`,
        [
          subscriptionId,
          h.orgA,
          JSON.stringify({ name: 'Growth', price: 99, planType: 'platform' }),
          JSON.stringify({ name: 'Basic', price: 0 }),
          JSON.stringify(['recording']),
          now,
        ],
      );
      await h.sql(
        `INSERT INTO management.subscription (id, organization_id, status, platform_plan, support_plan, created_on, modified_on) VALUES ($1, $2, 'cancelled', '{"name":"Starter","price":0}', '{}', $3, $3)`,
        [randomUUID(), h.orgA, now + 1],
      );
    });

    it('reads, lists with OData and updates a subscription with change records', async () => {
      const one = await h.api('GET', `/Subscriptions/${subscriptionId}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({
        id: subscriptionId,
        organizationId: h.orgA,
        status: 'active',
        trialEndOn: null,
        trialStartOn: null,
        activatedOn: expect.any(Number),
        nextBillingOn: null,
        cancelledOn: null,
        billingUnit: 'month',
        cancelledReason: null,
        platformPlan: { name: 'Growth', price: 99, planType: 'platform' },
        supportPlan: { name: 'Basic', price: 0 },
        createdOn: expect.any(Number),
        modifiedOn: expect.any(Number),
        currentTermEnd: null,
        EnabledFeatures: ['recording'],
      });
      const list = await h.api(
        'GET',
        `/Subscriptions${q({ $filter: 'platformPlan/price gt 10', $orderby: 'createdOn desc', $top: 5, $skip: 0, $count: true, $select: 'status,platformPlan/name' })}`,
      );
      expect(list.body).toEqual({ '@odata.count': 1, value: [{ status: 'active', platformPlan: { name: 'Growth' } }] });
      const all = await h.api('GET', `/Subscriptions${q({ $orderby: 'status', $select: 'status' })}`);
      expect(all.body.value).toEqual([{ status: 'active' }, { status: 'cancelled' }]);

      const next = Date.UTC(2030, 0, 1);
      const put = await h.api('PUT', `/Subscriptions/${subscriptionId}`, {
        body: {
          status: 'paused',
          nextBillingOn: next,
          platformPlan: { name: 'Scale', price: 499 },
          supportPlan: { name: 'Premium' },
          EnabledFeatures: ['recording', 'sip'],
        },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual(
        expect.objectContaining({
          status: 'paused',
          nextBillingOn: next,
          billingUnit: null,
          activatedOn: null,
          platformPlan: { name: 'Scale', price: 499 },
          EnabledFeatures: ['recording', 'sip'],
        }),
      );
      const patch = await h.api('PATCH', `/Subscriptions/${subscriptionId}`, {
        body: { cancelledReason: 'too expensive' },
      });
      expect(patch.body).toEqual({ ...put.body, cancelledReason: 'too expensive', modifiedOn: expect.any(Number) });
      const byYear = await h.api(
        'GET',
        `/Subscriptions${q({ $filter: 'year(nextBillingOn) eq 2030', $select: 'id' })}`,
      );
      expect(byYear.body.value).toEqual([{ id: subscriptionId }]);

      const log = changeMap(await changesOf(h, subscriptionId), 'Update');
      expect(log.status).toEqual(['active', 'paused']);
      expect(log.nextBillingOn).toEqual([null, String(next)]);
      expect(log.cancelledReason).toEqual([null, 'too expensive']);
      expect(log.EnabledFeatures).toEqual(['["recording"]', '["recording","sip"]']);
    });
  });

  describe('user accounts', () => {
    let userId: string;
    beforeAll(async () => {
      userId = randomUUID();
      const identities = [
        { id: 'google|1', emailAddress: 'ada@gmail.com', role: 'owner', createdOn: 1, modifiedOn: 1 },
        { id: 'github|2', username: 'ada', role: 'member', createdOn: 2, modifiedOn: 2 },
      ];
      await h.sql(
        `INSERT INTO management.user_account (id, organization_id, first_name, last_name, email_address, role, svc_app_created, last_svc_web_download_date, identities, created_on, modified_on)
         VALUES ($1, $2, 'Ada', 'Lovelace', 'ada@example.com', 'owner', true, 1700000000000, $3, $4, $4)`,
        [userId, h.orgA, JSON.stringify(identities), Date.now()],
      );
      await h.sql(
        `INSERT INTO management.user_account (id, organization_id, first_name, role, created_on, modified_on) VALUES ($1, $2, 'Bob', 'member', $3, $3)`,
        [randomUUID(), h.orgA, Date.now() + 1],
      );
    });

    it('reads a user account with identities and the 11 SDK download dates', async () => {
      const one = await h.api('GET', `/UserAccounts/${userId}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(
        expect.objectContaining({
          id: userId,
          firstName: 'Ada',
          emailAddress: 'ada@example.com',
          role: 'owner',
          svcAppCreated: true,
          svcChannelCreated: false,
          lastSvcWebDownloadDate: 1700000000000,
          lastSvcTVosDownloadDate: 0,
        }),
      );
      const dates = Object.keys(one.body).filter((k) => /^lastSvc.*DownloadDate$/.test(k));
      expect(dates).toHaveLength(11);
      expect(one.body.identities).toEqual([
        { id: 'google|1', emailAddress: 'ada@gmail.com', role: 'owner', createdOn: 1, modifiedOn: 1 },
        { id: 'github|2', username: 'ada', role: 'member', createdOn: 2, modifiedOn: 2 },
      ]);
      const expanded = await h.api(
        'GET',
        `/UserAccounts/${userId}${q({ $select: 'firstName', $expand: "identities($filter=role eq 'member';$select=id)" })}`,
      );
      expect(expanded.body).toEqual({ firstName: 'Ada', identities: [{ id: 'github|2' }] });
      expect((await h.api('GET', '/Organizations')).body.value[0].userIds).toEqual(expect.arrayContaining([userId]));
    });

    it('lists with OData and updates (identities are not writable) with change records', async () => {
      const list = await h.api(
        'GET',
        `/UserAccounts${q({ $filter: "role eq 'owner' or firstName eq 'Bob'", $orderby: 'firstName desc', $top: 1, $skip: 1, $count: true, $select: 'firstName', $expand: 'identities($orderby=createdOn;$top=1)' })}`,
      );
      expect(list.body).toEqual({
        '@odata.count': 2,
        value: [{ firstName: 'Ada', identities: [expect.objectContaining({ id: 'google|1' })] }],
      });

      const put = await h.api('PUT', `/UserAccounts/${userId}`, {
        body: {
          firstName: 'Augusta',
          lastName: 'King',
          lastSvcIosDownloadDate: 1710000000000,
          identities: [],
          svcChannelCreated: true,
        },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual(
        expect.objectContaining({
          firstName: 'Augusta',
          lastName: 'King',
          emailAddress: null,
          role: null,
          svcAppCreated: false,
          svcChannelCreated: true,
          lastSvcWebDownloadDate: 0,
          lastSvcIosDownloadDate: 1710000000000,
        }),
      );
      expect(put.body.identities).toHaveLength(2);
      const patch = await h.api('PATCH', `/UserAccounts/${userId}`, { body: { role: 'admin' } });
      expect(patch.body).toEqual({ ...put.body, role: 'admin', modifiedOn: expect.any(Number) });
      const log = changeMap(await changesOf(h, userId), 'Update');
      expect(log).toEqual(
        expect.objectContaining({
          firstName: ['Ada', 'Augusta'],
          lastSvcWebDownloadDate: ['1700000000000', '0'],
          lastSvcIosDownloadDate: ['0', '1710000000000'],
          svcAppCreated: ['true', 'false'],
          role: [null, 'admin'],
        }),
      );
      expect(log.identities).toBeUndefined();
    });
  });
});
