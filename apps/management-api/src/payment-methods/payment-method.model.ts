import { defineEntityModel } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

const addressProperties = ['line1', 'line2', 'city', 'state', 'postalCode', 'country', 'countryFullName'].map(
  (name) => ({ name, kind: 'string' as const }),
);

/** Payment methods; the card is a complex property (`card/brand eq 'Visa'`, `card/expiryYear ge 2030`). */
export const paymentMethodModel = defineEntityModel({
  name: 'PaymentMethod',
  key: 'id',
  table: 'management.payment_method',
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'organizationId', kind: 'guid', column: 'organization_id' },
    { name: 'type', kind: 'string' },
    { name: 'status', kind: 'string' },
    {
      name: 'card',
      kind: 'complex',
      properties: [
        { name: 'firstName', kind: 'string' },
        { name: 'lastName', kind: 'string' },
        { name: 'brand', kind: 'string' },
        { name: 'expiryMonth', kind: 'integer' },
        { name: 'expiryYear', kind: 'integer' },
        { name: 'maskedNumber', kind: 'string' },
        { name: 'address', kind: 'complex', properties: addressProperties },
      ],
    },
    { name: 'createdOn', kind: 'datetime-ms', column: 'created_on' },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'modified_on' },
  ],
});

export const PAYMENT_METHODS: EntitySetSpec = {
  name: 'PaymentMethod',
  model: paymentMethodModel,
  tenantColumn: 'organization_id',
  defaultOrder: ['"e"."created_on"'],
};
