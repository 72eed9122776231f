import type { PropertySpec } from '@switchboard/odata';
import { int64 } from '@switchboard/persistence';
import { Column } from 'typeorm';

/** The audit columns of every management table, inherited by its entity (see `auditProperties`). */
export abstract class AuditColumns {
  @Column({ name: 'created_on', type: 'bigint', transformer: int64 })
  createdOn!: number;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy!: string | null;

  @Column({ name: 'modified_on', type: 'bigint', transformer: int64 })
  modifiedOn!: number;

  @Column({ name: 'modified_by', type: 'text', nullable: true })
  modifiedBy!: string | null;
}

/** `createdOn`, `createdBy`, `modifiedOn`, `modifiedBy` over the usual audit columns. */
export function auditProperties(): PropertySpec[] {
  return [
    { name: 'createdOn', kind: 'datetime-ms', column: 'created_on' },
    { name: 'createdBy', kind: 'string', column: 'created_by' },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'modified_on' },
    { name: 'modifiedBy', kind: 'string', column: 'modified_by' },
  ];
}

/** Secrets and write-only values: selectable, never filterable or sortable (no guessing by `startswith`). */
export function secret(name: string, column: string = name): PropertySpec {
  return { name, kind: 'string', column, filterable: false, sortable: false };
}

/** Default order of most entity sets: creation time, then the key. */
export const BY_CREATION = ['"e"."created_on"'] as const;
