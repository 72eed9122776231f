import { defineEntityModel } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

/** The change log. A change record is never modified: its audit fields are the change's time and author. */
export const changeRecordModel = defineEntityModel({
  name: 'ChangeRecord',
  key: 'id',
  table: 'management.change_record',
  properties: [
    { name: 'type', kind: 'string' },
    { name: 'entityType', kind: 'string', column: 'entity_type' },
    { name: 'entityId', kind: 'string', column: 'entity_id' },
    { name: 'propertyName', kind: 'string', column: 'property_name' },
    { name: 'oldValue', kind: 'string', column: 'old_value' },
    { name: 'newValue', kind: 'string', column: 'new_value' },
    { name: 'changedOn', kind: 'datetime-ms', column: 'changed_on' },
    { name: 'changedBy', kind: 'string', column: 'changed_by' },
    { name: 'id', kind: 'guid' },
    { name: 'createdOn', kind: 'datetime-ms', column: 'changed_on' },
    { name: 'createdBy', kind: 'string', column: 'changed_by' },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'changed_on' },
    { name: 'modifiedBy', kind: 'string', column: 'changed_by' },
  ],
});

export const CHANGE_RECORDS: EntitySetSpec = {
  name: 'ChangeRecord',
  model: changeRecordModel,
  tenantColumn: 'organization_id',
  // Without $orderby: the order the changes were written in.
  defaultOrder: ['"e"."seq"'],
};
