/** Entity models used by the tests of this library (not part of the build output). */
import { defineEntityModel, type EntityModel } from '../model.js';

export const partModel: EntityModel = defineEntityModel({
  name: 'Part',
  key: 'id',
  properties: [
    { name: 'id', kind: 'integer' },
    { name: 'label', kind: 'string' },
  ],
  navigations: [{ name: 'subParts', many: true, target: () => partModel, relation: { kind: 'jsonb' } }],
});

export const lineModel: EntityModel = defineEntityModel({
  name: 'Line',
  key: 'id',
  properties: [
    { name: 'id', kind: 'integer' },
    { name: 'name', kind: 'string' },
    { name: 'quantity', kind: 'integer' },
  ],
  navigations: [{ name: 'parts', many: true, target: partModel, relation: { kind: 'jsonb' } }],
});

/** A model with one property of every kind plus short names for expression tests. */
export const itemModel: EntityModel = defineEntityModel({
  name: 'Item',
  key: 'id',
  table: 'items',
  properties: [
    { name: 'id', kind: 'integer' },
    { name: 'name', kind: 'string', column: 'item_name' },
    { name: 'price', kind: 'number' },
    { name: 'qty', kind: 'integer' },
    { name: 'active', kind: 'boolean' },
    { name: 'createdOn', kind: 'datetime-ms', column: 'created_on' },
    { name: 'ref', kind: 'guid' },
    { name: 'tags', kind: 'string-array' },
    { name: 'secret', kind: 'string', filterable: false, sortable: false },
    {
      name: 'address',
      kind: 'complex',
      properties: [
        { name: 'street', kind: 'string' },
        { name: 'city', kind: 'string' },
        { name: 'zip', kind: 'integer' },
        { name: 'geo', kind: 'complex', properties: [{ name: 'lat', kind: 'number' }] },
      ],
    },
    { name: 'a', kind: 'boolean' },
    { name: 'b', kind: 'boolean' },
    { name: 'c', kind: 'boolean' },
    { name: 'x', kind: 'integer' },
    { name: 'y', kind: 'integer' },
    { name: 'z', kind: 'integer' },
    { name: 'd', kind: 'number' },
    { name: 's', kind: 'string' },
  ],
  navigations: [
    { name: 'lines', many: true, target: lineModel, relation: { kind: 'jsonb' } },
    {
      name: 'owner',
      many: false,
      target: () => ownerModel,
      relation: { kind: 'foreign-key', localKey: 'qty', foreignKey: 'id' },
    },
  ],
});

export const ownerModel: EntityModel = defineEntityModel({
  name: 'Owner',
  key: 'id',
  table: 'owners',
  properties: [
    { name: 'id', kind: 'integer' },
    { name: 'name', kind: 'string' },
  ],
});
