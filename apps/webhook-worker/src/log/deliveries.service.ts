import { Injectable } from '@nestjs/common';
import {
  DomainError,
  type CallerScope,
  type ForwardedQueryOptions,
  type ODataListResponse,
  type WebhookDelivery,
  type WebhookDeliveryReplayResult,
} from '@switchboard/contracts';
import {
  applyODataQuery,
  executeCount,
  parseForwardedQuery,
  projectRecord,
  selectModelRecords,
  withForwardedQueryErrors,
} from '@switchboard/odata';
import { randomUUID } from 'node:crypto';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import { DeliveryQueue, withTimeout } from '../delivery/delivery-queue.js';
import type { PlannedDelivery } from '../intake/delivery-planner.js';
import { jobOf } from '../intake/event-intake.js';
import { WebhookResolver } from '../matching/webhook-resolver.js';
import { DeliveryRepository } from './delivery.repository.js';
import { WEBHOOK_DELIVERY_TABLE, webhookDeliveryModel } from './webhook-delivery.model.js';

const ALIAS = 'a';

export function canSee(scope: CallerScope, organizationId: string): boolean {
  return scope.operator || (scope.organizationId !== null && scope.organizationId === organizationId);
}

/**
 * The `/WebhookDeliveries` entity set: list, read, replay (see messaging/webhooks.ts). The OData
 * options are bound to the attempt's properties (`parseForwardedQuery`); an attempt has no
 * navigation properties, so any `$expand` name is UnknownProperty and `$expand=*` expands nothing.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly ds: DataSource,
    private readonly repository: DeliveryRepository,
    private readonly queue: DeliveryQueue,
    private readonly resolver: WebhookResolver,
  ) {}

  private base(scope: CallerScope): {
    qb: SelectQueryBuilder<Record<string, unknown>>;
    toRecord: (raw: Record<string, unknown>) => Record<string, unknown>;
  } {
    const qb = this.ds.createQueryBuilder().from(WEBHOOK_DELIVERY_TABLE, ALIAS) as SelectQueryBuilder<
      Record<string, unknown>
    >;
    const toRecord = selectModelRecords(qb, webhookDeliveryModel, ALIAS);
    if (!scope.operator) {
      if (scope.organizationId === null) qb.where('FALSE');
      else
        qb.where(`"${ALIAS}"."organization_id" = :scopeOrganizationId`, { scopeOrganizationId: scope.organizationId });
    }
    return { qb, toRecord };
  }

  async list(scope: CallerScope, options: ForwardedQueryOptions): Promise<ODataListResponse<WebhookDelivery>> {
    const query = parseForwardedQuery(options, webhookDeliveryModel);
    const { qb, toRecord } = this.base(scope);
    // Newest first unless the caller orders (the key is added as the last sort item either way).
    if (query.orderBy.length === 0) qb.orderBy(`"${ALIAS}"."attempted_on"`, 'DESC');
    const applied = withForwardedQueryErrors(() => applyODataQuery(qb, query, webhookDeliveryModel, ALIAS));
    const rows = (await applied.query.getRawMany()) as Array<Record<string, unknown>>;
    const value = rows.map((raw) => projectRecord(toRecord(raw), query, webhookDeliveryModel) as WebhookDelivery);
    if (!applied.countQuery) return { value };
    return { value, '@odata.count': await executeCount(applied.countQuery) };
  }

  async get(
    scope: CallerScope,
    id: string,
    options: ForwardedQueryOptions | undefined,
  ): Promise<Partial<WebhookDelivery>> {
    const query = parseForwardedQuery(options, webhookDeliveryModel, true);
    const { qb, toRecord } = this.base(scope);
    qb.andWhere(`"${ALIAS}"."id" = :attemptId`, { attemptId: id }).limit(1);
    const raw = (await qb.getRawOne()) as Record<string, unknown> | undefined;
    if (!raw) throw new DomainError('NotFound', `No webhook delivery ${id}.`);
    return projectRecord(toRecord(raw), query, webhookDeliveryModel) as Partial<WebhookDelivery>;
  }

  /**
   * Replays a failed delivery: a new delivery with the same events, to the webhook's current URL
   * and `reliable` flag (the logged ones when the webhook is gone), queued now. When Redis does
   * not take the job at once, the delivery is committed anyway and the reconciler queues it.
   */
  async replay(scope: CallerScope, attemptId: string): Promise<WebhookDeliveryReplayResult> {
    const original = await this.repository.deliveryOfAttempt(attemptId);
    if (!original || !canSee(scope, original.organizationId))
      throw new DomainError('NotFound', `No webhook delivery ${attemptId}.`);
    if (original.state !== 'failed') {
      throw new DomainError(
        'Conflict',
        `Delivery ${original.id} is ${original.state}: only a failed delivery can be replayed.`,
      );
    }
    const resolution = await this.resolver.resolve(original.applicationId, original.channelId).catch(() => null);
    const current = resolution?.webhooks.find(
      (w) => w.id === original.webhookId && w.source === original.webhookSource,
    );
    const planned: PlannedDelivery = {
      id: randomUUID(),
      webhook: {
        id: original.webhookId,
        source: original.webhookSource,
        url: current?.url || original.url,
        events: null,
        batch: original.batch,
        reliable: current?.reliable ?? original.reliable,
        disabled: false,
      },
      organizationId: original.organizationId,
      applicationId: original.applicationId,
      channelId: original.channelId,
      events: original.events,
      order: 0,
    };
    await this.repository.insertDelivery(planned, Date.now(), original.id);
    await withTimeout(this.queue.addAll([jobOf([planned], original.id)]), 2000).catch(() => undefined);
    return { deliveryId: planned.id, replayOf: original.id };
  }
}
