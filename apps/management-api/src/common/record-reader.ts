import { DomainError, isUuid } from '@switchboard/contracts';
import {
  applyODataQuery,
  executeCount,
  expandRecords,
  ODataError,
  projectRecord,
  selectModelRecords,
  type EntityModel,
  type ODataQuery,
} from '@switchboard/odata';
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { toQueryError } from './odata-query.js';

/** An entity record's values by property name (or a row's by column name). */
export type EntityValues = Record<string, unknown>;
export type Source = DataSource | EntityManager;

/** Alias of the entity's table in every query the reader builds. */
export const ALIAS = 'e';
const QUOTED = `"${ALIAS}"`;

export interface ListAnswer {
  value: EntityValues[];
  '@odata.count'?: number;
}

export interface EntitySetSpec {
  /** Entity type name: change log `entityType`, error messages. */
  name: string;
  /** The whitelist of filterable, sortable and selectable properties; `model.table` is read. */
  model: EntityModel;
  /**
   * Column holding the owning organization (`id` for the organization itself); null: a deployment-wide set (operator
   * only).
   */
  tenantColumn: string | null;
  /**
   * Navigation properties stored inline (JSONB columns of the row), by navigation name: part of
   * every full record; `$expand` applies nested options to them.
   */
  inline?: Readonly<Record<string, string>>;
  /** Navigation properties loaded from other tables: `null` in a record unless `$expand`ed. */
  deferred?: readonly string[];
  /** ORDER BY (SQL over the alias `e`) when `$orderby` is absent; the key follows as tiebreak. */
  defaultOrder: readonly string[];
  /** Final touch of a full record before projection (e.g. hiding a value). */
  finish?: (record: EntityValues) => EntityValues;
}

/**
 * Reads one entity set through the OData engine: tenant condition first, then `$filter`,
 * `$orderby`, `$top`, `$skip` in SQL, `$expand` (one query per navigation) and `$select` on the
 * loaded records. Records are keyed by the contract's property names.
 */
export class RecordReader {
  constructor(readonly spec: EntitySetSpec) {
    if (!spec.model.table) throw new Error(`Entity model ${spec.model.name} needs a table`);
  }

  get model(): EntityModel {
    return this.spec.model;
  }

  private base(source: Source, caller: Caller, where?: { sql: string; params: EntityValues }) {
    const qb = source.createQueryBuilder().from(this.spec.model.table!, ALIAS) as SelectQueryBuilder<EntityValues>;
    if (this.spec.tenantColumn)
      qb.where(`${QUOTED}."${this.spec.tenantColumn}" = :sb_tenant`, { sb_tenant: caller.organizationId });
    else qb.where('TRUE');
    if (where) qb.andWhere(where.sql, where.params);
    const toRecord = selectModelRecords(qb, this.spec.model, ALIAS);
    const inline = Object.entries(this.spec.inline ?? {});
    inline.forEach(([name, column]) => qb.addSelect(`${QUOTED}."${column}"`, `nav_${name}`));
    const build = (raw: EntityValues): EntityValues => {
      const record = toRecord(raw);
      for (const [name] of inline) record[name] = raw[`nav_${name}`] ?? null;
      for (const name of this.spec.deferred ?? []) record[name] = null;
      return this.spec.finish ? this.spec.finish(record) : record;
    };
    return { qb, build };
  }

  /** A list answer: `{ value }` plus `@odata.count` with `$count=true`. */
  async list(
    source: Source,
    caller: Caller,
    query: ODataQuery,
    where?: { sql: string; params: EntityValues },
  ): Promise<ListAnswer> {
    const { qb, build } = this.base(source, caller, where);
    if (query.orderBy.length === 0) this.spec.defaultOrder.forEach((sql) => qb.addOrderBy(sql, 'ASC'));
    const { query: page, countQuery } = guard(() => applyODataQuery(qb, query, this.spec.model, ALIAS));
    const rows = (await page.getRawMany()) as EntityValues[];
    const count = countQuery ? await executeCount(countQuery) : undefined;
    const records = rows.map(build);
    await this.expand(source, records, query);
    const value = records.map((r) => projectRecord(r, query));
    return count === undefined ? { value } : { '@odata.count': count, value };
  }

  /**
   * The records under one parent record (`column` holds the parent's id), or all of them without
   * a parent id; a parent that is missing or another organization's is NotFound, naming `param`.
   */
  async listUnder(
    source: Source,
    caller: Caller,
    query: ODataQuery,
    parent: { reader: RecordReader; id: string | undefined; column: string; param: string },
  ): Promise<ListAnswer> {
    if (parent.id === undefined) return this.list(source, caller, query);
    const found = await parent.reader.find(source, caller, parent.id);
    if (!found) throw parent.reader.notFound(parent.id, parent.param);
    return this.list(source, caller, query, {
      sql: `${QUOTED}."${parent.column}" = :sb_parent`,
      params: { sb_parent: found.id },
    });
  }

  /** One record with `$select`/`$expand` applied; another organization's record is NotFound. */
  async one(source: Source, caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    const record = await this.find(source, caller, id);
    if (!record) throw this.notFound(id);
    if (!query) return record;
    await this.expand(source, [record], query);
    return projectRecord(record, query);
  }

  /** The full record (every property, no expansion), or null when missing or another organization's. */
  async find(source: Source, caller: Caller, id: string): Promise<EntityValues | null> {
    if (!isUuid(id)) return null;
    const { qb, build } = this.base(source, caller, { sql: `${QUOTED}."id" = :sb_id`, params: { sb_id: id } });
    const raw = (await qb.getRawOne()) as EntityValues | undefined;
    return raw ? build(raw) : null;
  }

  /**
   * For writes: locks the row (`FOR UPDATE`, so concurrent writers of one record take turns and
   * the change log sees each change once) and returns the full record; NotFound otherwise.
   */
  async lock(manager: EntityManager, caller: Caller, id: string): Promise<EntityValues> {
    if (!isUuid(id)) throw this.notFound(id);
    const tenant = this.spec.tenantColumn;
    const rows = (await manager.query(
      `SELECT 1 FROM ${this.spec.model.table} WHERE "id" = $1 ${tenant ? `AND "${tenant}" = $2` : ''} FOR UPDATE`,
      tenant ? [id, caller.organizationId] : [id],
    )) as unknown[];
    const record = rows.length > 0 ? await this.find(manager, caller, id) : null;
    if (!record) throw this.notFound(id);
    return record;
  }

  notFound(id: string, target?: string): DomainError {
    return new DomainError('NotFound', `No ${this.spec.name} with id '${id.slice(0, 100)}'.`, [], target);
  }

  private async expand(source: Source, records: EntityValues[], query: ODataQuery): Promise<void> {
    if (query.expand.length === 0 || records.length === 0) return;
    try {
      await expandRecords(source, records, query.expand, this.spec.model);
    } catch (e) {
      if (e instanceof ODataError) throw toQueryError(e);
      throw e;
    }
  }
}

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ODataError) throw toQueryError(e);
    throw e;
  }
}
