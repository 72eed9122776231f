import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { SubscriptionUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { nextState, type WriteMode } from '../common/bodies.js';
import { writeChanges } from '../common/change-log.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { SubscriptionEntity } from './subscription.entity.js';
import { SUBSCRIPTIONS } from './subscription.model.js';

const DEFAULTS: EntityValues = {
  status: null,
  trialEndOn: null,
  trialStartOn: null,
  activatedOn: null,
  nextBillingOn: null,
  cancelledOn: null,
  billingUnit: null,
  cancelledReason: null,
  platformPlan: {},
  supportPlan: {},
  currentTermEnd: null,
  EnabledFeatures: null,
};
const FIELDS = Object.keys(DEFAULTS);

/**
 * Subscriptions are read and updated here; they are created with the organization's billing
 * account (outside this API), so there is no create operation.
 */
@Injectable()
export class SubscriptionsService {
  readonly reader = new RecordReader(SUBSCRIPTIONS);

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.reader.list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<SubscriptionUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    return this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const current = Object.fromEntries(FIELDS.map((f) => [f, before[f]]));
      const state = nextState(
        current,
        Object.fromEntries(Object.entries(body).filter(([k]) => FIELDS.includes(k))),
        mode,
        DEFAULTS,
      );
      await m
        .getRepository(SubscriptionEntity)
        .update(
          { id, organizationId: caller.organizationId },
          { ...(state as Partial<SubscriptionEntity>), modifiedOn: Date.now(), modifiedBy: caller.principal },
        );
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, {
        entityType: 'Subscription',
        entityId: id,
        type: 'Update',
        before,
        after,
        properties: FIELDS,
      });
      return after;
    });
  }
}
