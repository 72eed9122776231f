import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { nextState, type WriteMode } from './bodies.js';
import { writeChanges } from './change-log.js';
import type { EntityValues, RecordReader } from './record-reader.js';

/** An entity set whose records come from elsewhere: the API reads them and updates their writable fields. */
export interface WritableFields<Entity extends ObjectLiteral> {
  reader: RecordReader;
  entity: EntityTarget<Entity>;
  /** The change log's `entityType`. */
  entityType: string;
  /** Every writable field with the value PUT gives it when absent. */
  defaults: EntityValues;
}

/** PUT or PATCH of the writable fields, with the change record, in the caller's transaction. */
export async function updateWritableFields<Entity extends ObjectLiteral>(
  manager: EntityManager,
  set: WritableFields<Entity>,
  caller: Caller,
  id: string,
  body: EntityValues,
  mode: WriteMode,
): Promise<EntityValues> {
  const fields = Object.keys(set.defaults);
  const before = await set.reader.lock(manager, caller, id);
  const current = Object.fromEntries(fields.map((field) => [field, before[field]]));
  const given = Object.fromEntries(Object.entries(body).filter(([field]) => fields.includes(field)));
  const state = nextState(current, given, mode, set.defaults);
  await manager.getRepository(set.entity).update(
    { id, organizationId: caller.organizationId } as unknown as Partial<Entity>,
    {
      ...state,
      modifiedOn: Date.now(),
      modifiedBy: caller.principal,
    } as unknown as Partial<Entity>,
  );
  const after = await set.reader.one(manager, caller, id);
  await writeChanges(manager, caller, {
    entityType: set.entityType,
    entityId: id,
    type: 'Update',
    before,
    after,
    properties: fields,
  });
  return after;
}
