import type { ChangeType } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { ChangeRecordEntity } from '../change-records/change-record.entity.js';
import type { EntityValues } from './record-reader.js';

export const REDACTED = '<redacted>';

/** The contract's `CHANGE_TYPES`: the ChangeRecord schema documents exactly what is written. */
export type { ChangeType };

/** How a property's value is written to the change log. */
export type Redactor = (value: unknown) => unknown;

/** Secrets: whatever the value, the log reads `<redacted>` (null stays null: "no secret"). */
export const redactAlways: Redactor = (value) => (value === null || value === undefined ? null : REDACTED);

/** Redacts some keys inside an object value (e.g. `rtmp.secretKey`). */
export function redactKeys(...keys: string[]): Redactor {
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const copy: EntityValues = { ...(value as EntityValues) };
    for (const k of keys) if (copy[k] !== undefined && copy[k] !== null) copy[k] = REDACTED;
    return copy;
  };
}

export interface ChangeSet {
  entityType: string;
  entityId: string;
  type: ChangeType;
  /** The record before the change (null for a create). */
  before: EntityValues | null;
  /** The record after the change (null for a delete). */
  after: EntityValues | null;
  /** The properties compared, in log order. */
  properties: readonly string[];
  redact?: Readonly<Record<string, Redactor>>;
}

/** JSON with object keys sorted: equal values give equal text. */
export function canonical(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v as EntityValues).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/** A property value as change-log text: strings as they are, numbers and booleans printed, objects as JSON. */
export function logText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return canonical(value);
}

/**
 * The change records of one change: one per property whose value differs (for a create, one per
 * property that has a value). Pure; `write` stores them.
 */
export function diff(change: ChangeSet, caller: Caller, now: number): ChangeRecordEntity[] {
  const out: ChangeRecordEntity[] = [];
  for (const property of change.properties) {
    const before = change.before ? change.before[property] : null;
    const after = change.after ? change.after[property] : null;
    if (canonical(before ?? null) === canonical(after ?? null)) continue;
    const redact = change.redact?.[property] ?? ((v: unknown) => v);
    const entity = new ChangeRecordEntity();
    Object.assign(entity, {
      id: randomUUID(),
      organizationId: caller.organizationId,
      type: change.type,
      entityType: change.entityType,
      entityId: change.entityId,
      propertyName: property,
      oldValue: logText(redact(before ?? null)),
      newValue: logText(redact(after ?? null)),
      changedOn: now,
      changedBy: caller.principal,
    });
    out.push(entity);
  }
  return out;
}

/** Writes the change records of `changes` with the transaction's manager (same transaction as the change). */
export async function writeChanges(manager: EntityManager, caller: Caller, ...changes: ChangeSet[]): Promise<number> {
  const now = Date.now();
  const rows = changes.flatMap((c) => diff(c, caller, now));
  if (rows.length > 0) await manager.getRepository(ChangeRecordEntity).insert(rows);
  return rows.length;
}
