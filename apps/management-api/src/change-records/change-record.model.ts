import { defineEntityModel } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

/**
 * The change log (NOT NULL columns declared so `$orderby` can follow the indexes). A change record is never modified:
 * its audit fields are the change's time and author.
 */
export const changeRecordModel = defineEntityModel({
  name: 'ChangeRecord',
  key: 'id',
  table: 'management.change_record',
  properties: [
    { name: 'type', kind: 'string', nullable: false },
    { name: 'entityType', kind: 'string', column: 'entity_type', nullable: false },
    { name: 'entityId', kind: 'string', column: 'entity_id', nullable: false },
    { name: 'propertyName', kind: 'string', column: 'property_name', nullable: false },
    { name: 'oldValue', kind: 'string', column: 'old_value' },
    { name: 'newValue', kind: 'string', column: 'new_value' },
    { name: 'changedOn', kind: 'datetime-ms', column: 'changed_on', nullable: false },
    { name: 'changedBy', kind: 'string', column: 'changed_by', nullable: false },
    { name: 'id', kind: 'guid', nullable: false },
    { name: 'createdOn', kind: 'datetime-ms', column: 'changed_on', nullable: false },
    { name: 'createdBy', kind: 'string', column: 'changed_by', nullable: false },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'changed_on', nullable: false },
    { name: 'modifiedBy', kind: 'string', column: 'changed_by', nullable: false },
  ],
});

export const CHANGE_RECORDS: EntitySetSpec = {
  name: 'ChangeRecord',
  model: changeRecordModel,
  tenantColumn: 'organization_id',
  // Without $orderby: the order the changes were written in.
  defaultOrder: ['"e"."seq"'],
};
