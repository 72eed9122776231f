import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { SubscriptionUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import type { WriteMode } from '../common/bodies.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { updateWritableFields } from '../common/writable-fields.js';
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

  update(caller: Caller, id: string, body: Partial<SubscriptionUpdateBody>, mode: WriteMode): Promise<EntityValues> {
    const set = { reader: this.reader, entity: SubscriptionEntity, entityType: 'Subscription', defaults: DEFAULTS };
    return this.ds.transaction((manager) => updateWritableFields(manager, set, caller, id, body, mode));
  }
}
