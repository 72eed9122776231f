/**
 * What application webhooks and channel webhooks share: columns, model, writable state, defaults,
 * and the "inline webhooks" of a parent's body (`webhooks` of an application or channel config).
 */
import { Inject, Injectable } from '@nestjs/common';
import { addressAllowed, literalHostKind, type TargetPolicy } from '@switchboard/config';
import { DomainError } from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import { defineEntityModel, type EntityModel } from '@switchboard/odata';
import { randomUUID } from 'node:crypto';
import { Column, PrimaryColumn, type EntityManager, type EntityTarget } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import type { ManagementConfig } from '../config.js';
import { checkHttpUrl, invalid, nextState, type WriteMode } from './bodies.js';
import { writeChanges } from './change-log.js';
import { AuditColumns, auditProperties, BY_CREATION } from './audit-columns.js';
import type { EntitySetSpec, EntityValues, RecordReader } from './record-reader.js';

/** Columns of both webhook tables (each entity adds its parent column). */
export abstract class WebhookColumns extends AuditColumns {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ type: 'text', nullable: true })
  url!: string | null;

  @Column({ type: 'boolean' })
  disabled!: boolean;

  @Column({ type: 'boolean' })
  batch!: boolean;

  @Column({ type: 'boolean' })
  reliable!: boolean;

  @Column({ type: 'jsonb', nullable: true })
  events!: string[] | null;
}

/** The writable fields of a webhook and their values when a PUT leaves them out. */
export interface WebhookState extends EntityValues {
  name: string | null;
  url: string | null;
  disabled: boolean;
  batch: boolean;
  reliable: boolean;
  events: string[] | null;
}
export const WEBHOOK_DEFAULTS: WebhookState = {
  name: null,
  url: null,
  disabled: false,
  batch: false,
  reliable: false,
  events: null,
};
const WEBHOOK_FIELDS = Object.keys(WEBHOOK_DEFAULTS);

export function webhookModel(name: string, table: string, parentProperty: string, parentColumn: string): EntityModel {
  return defineEntityModel({
    name,
    key: 'id',
    table,
    properties: [
      { name: parentProperty, kind: 'guid', column: parentColumn },
      { name: 'name', kind: 'string' },
      { name: 'url', kind: 'string' },
      { name: 'disabled', kind: 'boolean' },
      { name: 'batch', kind: 'boolean' },
      { name: 'reliable', kind: 'boolean' },
      { name: 'events', kind: 'string-array' },
      { name: 'id', kind: 'guid' },
      ...auditProperties(),
    ],
  });
}

export function webhookSet(model: EntityModel): EntitySetSpec {
  return { name: model.name, model, tenantColumn: 'organization_id', defaultOrder: BY_CREATION };
}

/** The kind of webhook: its entity, reader, parent property and column. */
export interface WebhookKind {
  entityType: 'ApplicationWebhook' | 'ChannelWebhook';
  entity: EntityTarget<WebhookColumns>;
  reader: RecordReader;
  parentProperty: 'applicationConfigId' | 'channelConfigId';
  parentColumn: string;
}

export function trackedWebhookProperties(kind: WebhookKind): string[] {
  return [kind.parentProperty, ...WEBHOOK_FIELDS];
}

/**
 * The webhook's URL: http or https, and not an address the operator's policy refuses when that is
 * known without DNS (an IP literal, `localhost`); a name is checked by webhook-worker each time it
 * delivers, against every address it resolves to then.
 */
export function checkWebhook(
  state: WebhookState,
  targets: TargetPolicy,
  field = 'url',
  previousUrl: string | null = null,
): void {
  checkHttpUrl(state.url, field);
  // A URL kept as it was is not judged again (the policy may have changed since it was written).
  if (state.url === null || state.url === previousUrl) return;
  const kind = literalHostKind(new URL(state.url).hostname);
  if (kind !== undefined && !addressAllowed(kind, targets)) throw invalid(field, `must not target a ${kind} address`);
}

/**
 * The target policy of webhook URLs: the settings webhook-worker applies too (WEBHOOK_ALLOW_PRIVATE_TARGETS,
 * WEBHOOK_ALLOW_LOOPBACK).
 */
@Injectable()
export class WebhookTargets implements TargetPolicy {
  readonly allowPrivate: boolean;
  readonly allowLoopback: boolean;

  constructor(@Inject(SERVICE_CONFIG) config: Pick<ManagementConfig, 'allowPrivateTargets' | 'allowLoopback'>) {
    this.allowPrivate = config.allowPrivateTargets;
    this.allowLoopback = config.allowLoopback;
  }
}

/** Inserts one webhook of `parentId` and writes its change records; returns the new record. */
export async function insertWebhook(
  m: EntityManager,
  caller: Caller,
  kind: WebhookKind,
  parentId: string,
  body: EntityValues,
  targets: TargetPolicy,
  fieldPrefix = '',
): Promise<EntityValues> {
  const state = nextState(WEBHOOK_DEFAULTS, pickWebhookFields(body), 'replace', WEBHOOK_DEFAULTS);
  checkWebhook(state, targets, `${fieldPrefix}url`);
  const now = Date.now();
  const id = randomUUID();
  await m.getRepository(kind.entity).insert({
    ...state,
    id,
    organizationId: caller.organizationId,
    [kind.parentProperty]: parentId,
    createdOn: now,
    createdBy: caller.principal,
    modifiedOn: now,
    modifiedBy: caller.principal,
  } as EntityValues);
  const after = await kind.reader.one(m, caller, id);
  await writeChanges(m, caller, {
    entityType: kind.entityType,
    entityId: id,
    type: 'Create',
    before: null,
    after,
    properties: trackedWebhookProperties(kind),
  });
  return after;
}

/** Updates one webhook (already locked, `before`), optionally moving it to another parent. */
export async function updateWebhook(
  m: EntityManager,
  caller: Caller,
  kind: WebhookKind,
  before: EntityValues,
  body: EntityValues,
  mode: WriteMode,
  parentId: string,
  targets: TargetPolicy,
  fieldPrefix = '',
): Promise<EntityValues> {
  const current = Object.fromEntries(WEBHOOK_FIELDS.map((f) => [f, before[f]])) as WebhookState;
  const state = nextState(current, pickWebhookFields(body), mode, WEBHOOK_DEFAULTS);
  checkWebhook(state, targets, `${fieldPrefix}url`, current.url);
  const id = before.id as string;
  await m.getRepository(kind.entity).update(
    { id, organizationId: caller.organizationId } as EntityValues,
    {
      ...state,
      [kind.parentProperty]: parentId,
      modifiedOn: Date.now(),
      modifiedBy: caller.principal,
    } as EntityValues,
  );
  const after = await kind.reader.one(m, caller, id);
  await writeChanges(m, caller, {
    entityType: kind.entityType,
    entityId: id,
    type: 'Update',
    before,
    after,
    properties: trackedWebhookProperties(kind),
  });
  return after;
}

/** Deletes one webhook (already read, `before`) and writes its change records of type `Delete`. */
export async function deleteWebhook(m: EntityManager, caller: Caller, kind: WebhookKind, before: EntityValues) {
  const id = before.id as string;
  await m.getRepository(kind.entity).delete({ id, organizationId: caller.organizationId } as EntityValues);
  await writeChanges(m, caller, {
    entityType: kind.entityType,
    entityId: id,
    type: 'Delete',
    before,
    after: null,
    properties: trackedWebhookProperties(kind),
  });
}

/**
 * The `webhooks` of a parent's body: null or absent leaves the parent's webhooks alone; a list
 * becomes the parent's webhooks: items with the `id` of one of them update it, items without `id`
 * are created, and the parent's webhooks not in the list are deleted (change records of type
 * `Delete`). An `id` that is not one of the parent's webhooks is a 400 naming the item.
 *
 * Returns the parent's webhooks as written, one full record per item in the body's order (the
 * `webhooks` of the create or update answer), or null when the body left them alone.
 */
async function syncInlineWebhooks(
  m: EntityManager,
  caller: Caller,
  kind: WebhookKind,
  parentId: string,
  items: EntityValues[] | null | undefined,
  targets: TargetPolicy,
): Promise<EntityValues[] | null> {
  if (items === null || items === undefined) return null;
  const existing = (await m.query(
    `SELECT id FROM ${kind.reader.model.table} WHERE "${kind.parentColumn}" = $1 AND organization_id = $2 ORDER BY created_on, id FOR UPDATE`,
    [parentId, caller.organizationId],
  )) as Array<{ id: string }>;
  const ids = new Set(existing.map((r) => r.id));
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const id = typeof item.id === 'string' ? item.id.toLowerCase() : null;
    if (id !== null && (!ids.has(id) || seen.has(id))) {
      const field = `webhooks[${i}].id`;
      throw new DomainError(
        'ValidationFailed',
        `${field} is not a webhook of this config (leave it out to create one).`,
        [{ field, message: 'is not a webhook of this config' }],
        field,
      );
    }
    if (id !== null) seen.add(id);
  }
  const kept = new Set<string>();
  const written: EntityValues[] = [];
  for (const [i, item] of items.entries()) {
    const id = typeof item.id === 'string' ? item.id.toLowerCase() : null;
    if (id === null) {
      written.push(await insertWebhook(m, caller, kind, parentId, item, targets, `webhooks[${i}].`));
    } else {
      kept.add(id);
      const before = (await kind.reader.find(m, caller, id))!;
      written.push(await updateWebhook(m, caller, kind, before, item, 'replace', parentId, targets, `webhooks[${i}].`));
    }
  }
  for (const id of ids) {
    if (kept.has(id)) continue;
    await deleteWebhook(m, caller, kind, (await kind.reader.find(m, caller, id))!);
  }
  return written;
}

/**
 * The answer of a create or update of a parent (spec 4.B rule 7: "the created or updated record"):
 * with the webhooks as written when the body carried `webhooks`; otherwise `webhooks` stays null,
 * as in a read without `$expand` (a navigation property the request did not touch).
 */
/** Writes a parent's inline `webhooks` (when the body has them); the parent record shows them as written. */
export async function withInlineWebhooks(
  m: EntityManager,
  caller: Caller,
  kind: WebhookKind,
  parent: EntityValues,
  items: unknown,
  targets: TargetPolicy,
): Promise<EntityValues> {
  const written = await syncInlineWebhooks(
    m,
    caller,
    kind,
    parent.id as string,
    items as EntityValues[] | null | undefined,
    targets,
  );
  return withWrittenWebhooks(parent, written);
}

function withWrittenWebhooks(record: EntityValues, written: EntityValues[] | null): EntityValues {
  return written === null ? record : { ...record, webhooks: written };
}

function pickWebhookFields(body: EntityValues): EntityValues {
  return Object.fromEntries(Object.entries(body).filter(([k]) => WEBHOOK_FIELDS.includes(k)));
}
