import { defineEntityModel, type PropertySpec } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

const plan = (name: string, column: string): PropertySpec => ({
  name,
  kind: 'complex',
  column,
  properties: [
    { name: 'name', kind: 'string' },
    { name: 'description', kind: 'string' },
    { name: 'status', kind: 'string' },
    { name: 'externalId', kind: 'string' },
    { name: 'planType', kind: 'string' },
    { name: 'archivedOn', kind: 'number' },
    { name: 'price', kind: 'number' },
  ],
});

/** Subscriptions of the organization; plans are complex properties (`platformPlan/name eq 'Growth'`). */
export const subscriptionModel = defineEntityModel({
  name: 'Subscription',
  key: 'id',
  table: 'management.subscription',
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'organizationId', kind: 'guid', column: 'organization_id' },
    { name: 'status', kind: 'string' },
    { name: 'trialEndOn', kind: 'datetime-ms', column: 'trial_end_on' },
    { name: 'trialStartOn', kind: 'datetime-ms', column: 'trial_start_on' },
    { name: 'activatedOn', kind: 'datetime-ms', column: 'activated_on' },
    { name: 'nextBillingOn', kind: 'datetime-ms', column: 'next_billing_on' },
    { name: 'cancelledOn', kind: 'datetime-ms', column: 'cancelled_on' },
    { name: 'billingUnit', kind: 'string', column: 'billing_unit' },
    { name: 'cancelledReason', kind: 'string', column: 'cancelled_reason' },
    plan('platformPlan', 'platform_plan'),
    plan('supportPlan', 'support_plan'),
    { name: 'createdOn', kind: 'datetime-ms', column: 'created_on' },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'modified_on' },
    { name: 'currentTermEnd', kind: 'datetime-ms', column: 'current_term_end' },
    { name: 'EnabledFeatures', kind: 'string-array', column: 'enabled_features' },
  ],
});

export const SUBSCRIPTIONS: EntitySetSpec = {
  name: 'Subscription',
  model: subscriptionModel,
  tenantColumn: 'organization_id',
  defaultOrder: ['"e"."created_on"'],
};
