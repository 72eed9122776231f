import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApiKeyUpdateBody, DomainError } from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { ODataQuery } from '@switchboard/odata';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ApplicationEvents } from '../application-configs/application-events.js';
import type { Caller } from '../auth/caller.js';
import { nextState, type WriteMode } from '../common/bodies.js';
import { REDACTED, writeChanges } from '../common/change-log.js';
import { insertRecorded, type RecordedInsert } from '../common/recorded-insert.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { API_KEYS } from './api-key.model.js';

export interface VerifiedKey {
  keyId: string;
  organizationId: string;
  operator: boolean;
  /** The key's organization is disabled: the key is refused (403). */
  organizationDisabled: boolean;
}

/** Key values: `sb_` + 32 random bytes (base64url). High entropy, so a plain SHA-256 is a sound hash. */
export function newKeyValue(): string {
  return `sb_${randomBytes(32).toString('base64url')}`;
}

export function hashKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

const TRACKED = ['key', 'tag', 'disabled'] as const;
const CACHE_LIMIT = 10_000;

@Injectable()
export class ApiKeysService {
  readonly reader = new RecordReader(API_KEYS);
  private readonly insert: RecordedInsert = {
    entity: ApiKeyEntity,
    reader: this.reader,
    change: { entityType: 'ApiKey', properties: TRACKED },
    logged: (after) => ({ ...after, key: REDACTED }),
  };
  /**
   * Verified keys by hash (API_KEY_CACHE_TTL_MS; dropped by organization when one is disabled or enabled, see
   * `forgetOrganization`).
   */
  private readonly verified = new Map<string, { key: VerifiedKey; expires: number }>();
  private readonly cacheTtlMs: number;
  /** Bumped by `forgetOrganization`: a verdict looked up before it is not kept (it may predate the change). */
  private forgets = 0;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Optional() @Inject(SERVICE_CONFIG) config?: { apiKeyCacheTtlMs?: number },
    @Optional() private readonly events?: ApplicationEvents,
  ) {
    this.cacheTtlMs = config?.apiKeyCacheTtlMs ?? 0;
  }

  async verify(value: string): Promise<VerifiedKey | null> {
    if (!/^[\x21-\x7e]{8,256}$/.test(value)) return null;
    const hash = hashKey(value);
    const now = Date.now();
    const cached = this.cacheTtlMs > 0 ? this.verified.get(hash) : undefined;
    if (cached && cached.expires > now) return cached.key;
    const forgets = this.forgets;
    const rows = (await this.ds.query(
      'SELECT k.id, k.organization_id, k.operator, o.disabled FROM management.api_key k JOIN management.organization o ON o.id = k.organization_id ' +
        'WHERE k.key_hash = $1 AND NOT k.disabled',
      [hash],
    )) as Array<{ id: string; organization_id: string; operator: boolean; disabled: boolean }>;
    const row = rows[0];
    if (!row) return null;
    const key = {
      keyId: row.id,
      organizationId: row.organization_id,
      operator: row.operator,
      organizationDisabled: row.disabled,
    };
    if (this.cacheTtlMs > 0 && forgets === this.forgets) {
      this.verified.delete(hash);
      if (this.verified.size >= CACHE_LIMIT) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(hash, { key, expires: now + this.cacheTtlMs });
    }
    return key;
  }

  /** Drops the remembered verdicts of an organization's keys (it was disabled or enabled). */
  forgetOrganization(organizationId: string): void {
    this.forgets++;
    for (const [hash, entry] of this.verified)
      if (entry.key.organizationId === organizationId) this.verified.delete(hash);
  }

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.reader.list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  /** The only time the key value leaves the service; the change log reads `<redacted>` for it. */
  async create(caller: Caller, tag: string | null): Promise<EntityValues> {
    return this.ds.transaction((m) => this.insertKey(m, caller, tag));
  }

  /**
   * Inserts a key of `caller.organizationId` with its change records (same transaction); the answer shows the value.
   */
  async insertKey(m: EntityManager, caller: Caller, tag: string | null): Promise<EntityValues> {
    const value = newKeyValue();
    const after = await insertRecorded(m, caller, this.insert, { keyHash: hashKey(value), tag, operator: false });
    return { ...after, key: value };
  }

  /**
   * The tag, and `disabled`: a disabled key is refused like an unknown one. Never the calling key itself (409).
   * After the commit this replica forgets the organization's verdicts, and the gateways hear `organizations.changed`.
   */
  async update(caller: Caller, id: string, body: ApiKeyUpdateBody, mode: WriteMode): Promise<EntityValues> {
    const answer = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const current = { tag: before.tag as string | null, disabled: before.disabled === true };
      const next = nextState(current, body as EntityValues, mode, { tag: null, disabled: current.disabled });
      if (next.disabled && !current.disabled && id === caller.principal) {
        throw new DomainError(
          'Conflict',
          'A key cannot disable itself (it would lock its caller out).',
          [{ field: 'disabled', message: 'the key making this call' }],
          'disabled',
        );
      }
      await m
        .getRepository(ApiKeyEntity)
        .update(
          { id, organizationId: caller.organizationId },
          { tag: next.tag, disabled: next.disabled, modifiedOn: Date.now(), modifiedBy: caller.principal },
        );
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, {
        entityType: 'ApiKey',
        entityId: id,
        type: 'Update',
        before,
        after,
        properties: TRACKED,
      });
      return { after, disabledChanged: next.disabled !== current.disabled };
    });
    if (answer.disabledChanged) {
      this.forgetOrganization(caller.organizationId);
      this.events?.organizationChanged(caller.organizationId);
    }
    return answer.after;
  }

  /**
   * First run: one organization and one operator key. Returns the key value when it created one,
   * null when an operator key already exists (its value cannot be recovered: only a hash is kept).
   */
  async bootstrap(name: string): Promise<{ organizationId: string; apiKey: string | null }> {
    return this.ds.transaction(async (m) => {
      await m.query('SELECT pg_advisory_xact_lock(7301)');
      const existing = await m
        .getRepository(ApiKeyEntity)
        .findOne({ where: { operator: true }, order: { createdOn: 'ASC' } });
      if (existing) return { organizationId: existing.organizationId, apiKey: null };
      const now = Date.now();
      const org = m.getRepository(OrganizationEntity).create({
        id: randomUUID(),
        name,
        createdOn: now,
        modifiedOn: now,
        address: {},
        primaryContact: {},
        additionalContacts: null,
      });
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
}
