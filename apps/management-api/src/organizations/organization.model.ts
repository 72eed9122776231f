import { defineEntityModel, type EntityModel } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

export const addressModel: EntityModel = defineEntityModel({
  name: 'Address',
  key: 'line1',
  properties: ['line1', 'line2', 'city', 'state', 'postalCode', 'country', 'countryFullName'].map((name) => ({
    name,
    kind: 'string' as const,
  })),
});

export const contactModel: EntityModel = defineEntityModel({
  name: 'Contact',
  key: 'emailAddress',
  properties: ['firstName', 'lastName', 'emailAddress', 'phoneNumber'].map((name) => ({
    name,
    kind: 'string' as const,
  })),
});

/**
 * The organization. `address`, `primaryContact` and `additionalContacts` are navigation properties
 * stored inline: part of every full record, and `$expand` takes nested options for them
 * (`$expand=additionalContacts($filter=lastName eq 'Doe')`). `userIds` are the organization's user
 * accounts, computed.
 */
export const organizationModel = defineEntityModel({
  name: 'Organization',
  key: 'id',
  table: 'management.organization',
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'name', kind: 'string' },
    { name: 'paymentMethodId', kind: 'guid', column: 'payment_method_id' },
    { name: 'vatNumber', kind: 'string', column: 'vat_number' },
    { name: 'industry', kind: 'string' },
    {
      name: 'userIds',
      kind: 'string-array',
      sql: (a) =>
        `(SELECT COALESCE(jsonb_agg(u.id::text ORDER BY u.created_on, u.id), '[]'::jsonb) FROM management.user_account u WHERE u.organization_id = ${a}."id")`,
    },
    { name: 'disabled', kind: 'boolean' },
    { name: 'createdOn', kind: 'datetime-ms', column: 'created_on' },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'modified_on' },
  ],
  navigations: [
    { name: 'address', many: false, target: addressModel, relation: { kind: 'jsonb' } },
    { name: 'primaryContact', many: false, target: contactModel, relation: { kind: 'jsonb' } },
    { name: 'additionalContacts', many: true, target: contactModel, relation: { kind: 'jsonb' } },
  ],
});

export const ORGANIZATIONS: EntitySetSpec = {
  name: 'Organization',
  model: organizationModel,
  tenantColumn: 'id',
  inline: { address: 'address', primaryContact: 'primary_contact', additionalContacts: 'additional_contacts' },
  defaultOrder: ['"e"."created_on"'],
};

/** An operator's view of the organizations: every one of them, not only its own. */
export const ALL_ORGANIZATIONS: EntitySetSpec = { ...ORGANIZATIONS, tenantColumn: null };
