import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { writeChanges, type ChangeSet } from './change-log.js';
import type { EntityValues, RecordReader } from './record-reader.js';

/** How one entity set inserts a record and logs its creation. */
export interface RecordedInsert {
  entity: EntityTarget<ObjectLiteral>;
  reader: RecordReader;
  change: Pick<ChangeSet, 'entityType' | 'properties' | 'redact'>;
  /** The record as the change log shows it (api keys log their value redacted). */
  logged?: (after: EntityValues) => EntityValues;
  /** Maps a refused insert (a unique index) to its domain error. */
  refused?: (error: unknown) => never;
}

/**
 * Inserts `fields` as a new record of the caller's organization, created and modified now by the
 * caller, writes its Create change records in the same transaction, and answers the stored record.
 */
export async function insertRecorded(
  m: EntityManager,
  caller: Caller,
  insert: RecordedInsert,
  fields: ObjectLiteral,
): Promise<EntityValues> {
  const id = randomUUID();
  const now = Date.now();
  const stamped = { ...fields, id, organizationId: caller.organizationId, createdOn: now, createdBy: caller.principal };
  const inserting = m
    .getRepository(insert.entity)
    .insert({ ...stamped, modifiedOn: now, modifiedBy: caller.principal });
  await (insert.refused ? inserting.catch(insert.refused) : inserting);
  const after = await insert.reader.one(m, caller, id);
  const logged = insert.logged ? insert.logged(after) : after;
  await writeChanges(m, caller, { ...insert.change, entityId: id, type: 'Create', before: null, after: logged });
  return after;
}
