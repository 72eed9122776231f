import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DomainError, isUuid, type OrganizationCreateBody, type OrganizationUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import {
  JsonLogger,
  NatsClient,
  watchOrganizationChanges,
  type ApplicationChangesWatch,
} from '@switchboard/service-kit';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { ApplicationEvents } from '../application-configs/application-events.js';
import type { Caller } from '../auth/caller.js';
import { KnownOrganizations } from '../auth/known-organizations.js';
import { invalid, nextState, type WriteMode } from '../common/bodies.js';
import { writeChanges, type ChangeSet } from '../common/change-log.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { OrganizationEntity } from './organization.entity.js';
import { ALL_ORGANIZATIONS, ORGANIZATIONS } from './organization.model.js';

const DEFAULTS: EntityValues = {
  name: null,
  paymentMethodId: null,
  vatNumber: null,
  industry: null,
  address: {},
  primaryContact: {},
  additionalContacts: null,
};
const FIELDS = Object.keys(DEFAULTS);
/** Change-logged properties: the writable fields and `disabled` (operators only). */
const TRACKED = [...FIELDS, 'disabled'];
const NAME_MAX = 200;
/** Tag of the key POST /Organizations makes (renamed with PUT /ApiKeys/{id}). */
export const FIRST_KEY_TAG = 'first key';

/**
 * Organizations. A key sees, reads and updates its own organization only (another id: 404). An
 * operator key sees every organization, creates one with its first API key, and disables or
 * enables one (`disabled`); disabling refuses the organization's keys and tokens on both interfaces.
 */
@Injectable()
export class OrganizationsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly own = new RecordReader(ORGANIZATIONS);
  private readonly all = new RecordReader(ALL_ORGANIZATIONS);
  private changes?: ApplicationChangesWatch;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly keys: ApiKeysService,
    private readonly known: KnownOrganizations,
    private readonly events: ApplicationEvents,
    private readonly nats: NatsClient,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * Other replicas' disables reach this one's caches of key verdicts and token organizations. Not a
   * readiness check: a notice missed while NATS is away is bounded by those caches' short lifetimes.
   */
  onApplicationBootstrap() {
    this.changes = watchOrganizationChanges(this.nats, (id) => this.forget(id), { logger: this.logger });
  }

  onModuleDestroy() {
    this.changes?.stop();
  }

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.readerOf(caller).list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.readerOf(caller).one(this.ds, caller, id, query);
  }

  /**
   * Operators only: the organization and its first (non-operator) API key, in one transaction with their change
   * records.
   */
  async create(caller: Caller, body: Partial<OrganizationCreateBody>): Promise<EntityValues> {
    if (!caller.operator) throw new DomainError('Forbidden', 'Only an operator key creates organizations.');
    const state = nextState({ ...DEFAULTS }, pick(body as EntityValues), 'replace', DEFAULTS);
    checkName(state.name);
    if (state.paymentMethodId !== null)
      throw invalid('paymentMethodId', 'must be null: a new organization has no payment method yet');
    const disabled = body.disabled === true;
    return this.ds.transaction(async (m) => {
      const id = randomUUID();
      const now = Date.now();
      await m
        .getRepository(OrganizationEntity)
        .insert({ ...(state as Partial<OrganizationEntity>), id, disabled, createdOn: now, modifiedOn: now });
      const owner: Caller = { ...caller, organizationId: id, operator: false };
      const after = await this.all.one(m, caller, id);
      await this.logChanges(m, caller, id, {
        entityType: 'Organization',
        entityId: id,
        type: 'Create',
        before: null,
        after,
        properties: TRACKED,
      });
      const apiKey = await this.keys.insertKey(m, owner, FIRST_KEY_TAG);
      return { ...after, apiKey };
    });
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<OrganizationUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    const reader = this.readerOf(caller);
    const { before, after } = await this.ds.transaction(async (m) => {
      const before = await reader.lock(m, caller, id);
      const current = Object.fromEntries(TRACKED.map((f) => [f, before[f]]));
      const state = nextState(current, pick(body as EntityValues), mode, DEFAULTS);
      state.disabled = this.nextDisabled(caller, before, body.disabled);
      const target = before.id as string;
      await this.checkPaymentMethod(m, target, state.paymentMethodId as string | null);
      await m
        .getRepository(OrganizationEntity)
        .update({ id: target }, { ...(state as Partial<OrganizationEntity>), modifiedOn: Date.now() });
      const after = await reader.one(m, caller, id);
      await this.logChanges(m, caller, target, {
        entityType: 'Organization',
        entityId: target,
        type: 'Update',
        before,
        after,
        properties: TRACKED,
      });
      return { before, after };
    });
    if (before.disabled !== after.disabled) await this.announce(after.id as string);
    return after;
  }

  /**
   * `disabled` as the body leaves it: kept when absent; only an operator changes it, never for its own organization.
   */
  private nextDisabled(caller: Caller, before: EntityValues, wanted: boolean | undefined): boolean {
    const current = before.disabled === true;
    if (wanted === undefined || wanted === current) return current;
    if (!caller.operator)
      throw new DomainError(
        'Forbidden',
        'Only an operator key disables or enables an organization.',
        [{ field: 'disabled', message: 'operators only' }],
        'disabled',
      );
    if (wanted && before.id === caller.organizationId) {
      throw new DomainError(
        'Conflict',
        'An operator key cannot disable its own organization (it would lock itself out).',
        [{ field: 'disabled', message: "the caller's own organization" }],
        'disabled',
      );
    }
    return wanted;
  }

  private async checkPaymentMethod(
    m: EntityManager,
    organizationId: string,
    paymentMethodId: string | null,
  ): Promise<void> {
    if (paymentMethodId === null) return;
    const rows = isUuid(paymentMethodId)
      ? ((await m.query('SELECT 1 FROM management.payment_method WHERE id = $1 AND organization_id = $2', [
          paymentMethodId,
          organizationId,
        ])) as unknown[])
      : [];
    if (rows.length === 0) throw invalid('paymentMethodId', 'is not a payment method of the organization');
  }

  /**
   * The change log of the organization changed shows the change; when an operator changes another
   * organization, the operator's own log shows it too (its audit trail of what it did to customers).
   */
  private async logChanges(m: EntityManager, caller: Caller, organizationId: string, change: ChangeSet): Promise<void> {
    await writeChanges(m, { ...caller, organizationId }, change);
    if (organizationId !== caller.organizationId) await writeChanges(m, caller, change);
  }

  /**
   * After a disable or enable committed: this replica forgets at once; the others and the gateways
   * hear `organizations.changed`; every application of the organization is announced changed so
   * that cached resolutions (client token checks at /sync) are fetched again.
   */
  private async announce(organizationId: string): Promise<void> {
    this.forget(organizationId);
    this.events.organizationChanged(organizationId);
    const rows = (await this.ds.query(
      'SELECT application_id FROM management.application_config WHERE organization_id = $1',
      [organizationId],
    )) as Array<{ application_id: string }>;
    this.events.changed(rows.map((r) => r.application_id));
  }

  private forget(organizationId: string): void {
    this.keys.forgetOrganization(organizationId);
    this.known.forget(organizationId);
  }

  private readerOf(caller: Caller): RecordReader {
    return caller.operator ? this.all : this.own;
  }
}

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name.trim().length === 0) throw invalid('name', 'is required: a non-empty string');
  if (name.length > NAME_MAX) throw invalid('name', `must be at most ${NAME_MAX} characters`);
}

function pick(body: EntityValues): EntityValues {
  return Object.fromEntries(Object.entries(body).filter(([k]) => FIELDS.includes(k)));
}
