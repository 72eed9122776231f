import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DomainError } from '@switchboard/contracts';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { ApiKeyEntity } from './api-key.entity.js';

export interface ApiKeyRecord {
  id: string;
  key: string | null;
  tag: string | null;
  createdOn: number;
  createdBy: string | null;
  modifiedOn: number;
  modifiedBy: string | null;
}

export interface VerifiedKey {
  keyId: string;
  organizationId: string;
  operator: boolean;
}

/** Key values: `sb_` + 32 random bytes (base64url). High entropy, so a plain SHA-256 is a sound hash. */
export function newKeyValue(): string {
  return `sb_${randomBytes(32).toString('base64url')}`;
}

export function hashKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function toRecord(e: ApiKeyEntity, key: string | null = null): ApiKeyRecord {
  return { id: e.id, key, tag: e.tag, createdOn: e.createdOn, createdBy: e.createdBy, modifiedOn: e.modifiedOn, modifiedBy: e.modifiedBy };
}

@Injectable()
export class ApiKeysService {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async verify(value: string): Promise<VerifiedKey | null> {
    if (!/^[\x21-\x7e]{8,256}$/.test(value)) return null;
    const row = await this.ds.getRepository(ApiKeyEntity).findOne({ where: { keyHash: hashKey(value) } });
    return row ? { keyId: row.id, organizationId: row.organizationId, operator: row.operator } : null;
  }

  async list(caller: Caller): Promise<ApiKeyRecord[]> {
    const rows = await this.ds.getRepository(ApiKeyEntity).find({ where: { organizationId: caller.organizationId }, order: { createdOn: 'ASC', id: 'ASC' } });
    return rows.map((r) => toRecord(r));
  }

  async get(caller: Caller, id: string): Promise<ApiKeyRecord> {
    return toRecord(await this.find(caller, id));
  }

  /** The only time the key value leaves the service. */
  async create(caller: Caller, tag: string | null): Promise<ApiKeyRecord> {
    const value = newKeyValue();
    const now = Date.now();
    const entity = this.ds.getRepository(ApiKeyEntity).create({
      id: randomUUID(),
      organizationId: caller.organizationId,
      keyHash: hashKey(value),
      tag,
      operator: false,
      createdOn: now,
      createdBy: caller.principal,
      modifiedOn: now,
      modifiedBy: caller.principal,
    });
    await this.ds.getRepository(ApiKeyEntity).insert(entity);
    return toRecord(entity, value);
  }

  async update(caller: Caller, id: string, tag: string | null): Promise<ApiKeyRecord> {
    return this.ds.transaction(async (m) => {
      const entity = await this.find(caller, id, m.getRepository(ApiKeyEntity));
      entity.tag = tag;
      entity.modifiedOn = Date.now();
      entity.modifiedBy = caller.principal;
      await m.getRepository(ApiKeyEntity).save(entity);
      return toRecord(entity);
    });
  }

  /**
   * First run: one organization and one operator key. Returns the key value when it created one,
   * null when an operator key already exists (its value cannot be recovered: only a hash is kept).
   */
  async bootstrap(name: string): Promise<{ organizationId: string; apiKey: string | null }> {
    return this.ds.transaction(async (m) => {
      await m.query('SELECT pg_advisory_xact_lock(7301)');
      const existing = await m.getRepository(ApiKeyEntity).findOne({ where: { operator: true }, order: { createdOn: 'ASC' } });
      if (existing) return { organizationId: existing.organizationId, apiKey: null };
      const now = Date.now();
      const org = m.getRepository(OrganizationEntity).create({ id: randomUUID(), name, createdOn: now, modifiedOn: now });
      await m.getRepository(OrganizationEntity).insert(org);
      const value = newKeyValue();
      await m.getRepository(ApiKeyEntity).insert({
        id: randomUUID(),
        organizationId: org.id,
        keyHash: hashKey(value),
        tag: 'bootstrap operator key',
        operator: true,
        createdOn: now,
        createdBy: 'bootstrap',
        modifiedOn: now,
        modifiedBy: 'bootstrap',
      });
      return { organizationId: org.id, apiKey: value };
    });
  }

  private async find(caller: Caller, id: string, repo = this.ds.getRepository(ApiKeyEntity)): Promise<ApiKeyEntity> {
    // Another organization's key answers exactly like a missing one.
    const row = isUuid(id) ? await repo.findOne({ where: { id, organizationId: caller.organizationId } }) : null;
    if (!row) throw new DomainError('NotFound', `No API key with id '${id}'.`);
    return row;
  }
}

export function isUuid(v: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
}
