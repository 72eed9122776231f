import { isUuid, type CallerScope } from '@switchboard/contracts';

/** A WHERE clause built from conditions with positional parameters ($1, $2, ...). */
export class Where {
  readonly params: unknown[] = [];
  private readonly conditions: string[] = [];

  constructor(params: unknown[] = []) {
    this.params.push(...params);
  }

  /** Binds a value, returns its placeholder. */
  bind(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** `column = value`, unless value is undefined. */
  eq(column: string, value: string | undefined): this {
    if (value !== undefined) this.conditions.push(`${column} = ${this.bind(value)}`);
    return this;
  }

  raw(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  sql(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}

/**
 * Tenancy: a non-operator sees its organization's recordings only; an operator sees all. A
 * non-operator scope without organization sees nothing.
 */
export function applyScope(where: Where, scope: CallerScope, alias: string): Where {
  if (scope.operator) return where;
  if (!scope.organizationId) return where.raw('FALSE');
  return where.raw(`${alias}.organization_id = ${where.bind(scope.organizationId)}`);
}

export interface TimeWindow {
  timestampMin?: number;
  timestampMax?: number;
}

/** `timestampMin`/`timestampMax` (Unix seconds, inclusive) against `start_timestamp` (Unix ms). */
export function applyWindow(where: Where, window: TimeWindow, alias: string): Where {
  if (window.timestampMin !== undefined)
    where.raw(`${alias}.start_timestamp >= ${where.bind(window.timestampMin * 1000)}`);
  if (window.timestampMax !== undefined)
    where.raw(`${alias}.start_timestamp <= ${where.bind(window.timestampMax * 1000 + 999)}`);
  return where;
}

/** `createdBy`/`modifiedBy`/`deletedBy` are uuids: the principal when it is one, else null. */
export function actorOf(scope: CallerScope): string | null {
  return isUuid(scope.principal) ? scope.principal.toLowerCase() : null;
}
