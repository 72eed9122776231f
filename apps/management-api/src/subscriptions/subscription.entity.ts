import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Plan } from '@switchboard/contracts';
import { int64 } from '@switchboard/persistence';
import { AuditColumns } from '../common/audit-columns.js';

@Entity({ name: 'subscription' })
export class SubscriptionEntity extends AuditColumns {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'text', nullable: true })
  status!: string | null;

  @Column({ name: 'trial_end_on', type: 'bigint', nullable: true, transformer: int64 })
  trialEndOn!: number | null;

  @Column({ name: 'trial_start_on', type: 'bigint', nullable: true, transformer: int64 })
  trialStartOn!: number | null;

  @Column({ name: 'activated_on', type: 'bigint', nullable: true, transformer: int64 })
  activatedOn!: number | null;

  @Column({ name: 'next_billing_on', type: 'bigint', nullable: true, transformer: int64 })
  nextBillingOn!: number | null;

  @Column({ name: 'cancelled_on', type: 'bigint', nullable: true, transformer: int64 })
  cancelledOn!: number | null;

  @Column({ name: 'billing_unit', type: 'text', nullable: true })
  billingUnit!: string | null;

  @Column({ name: 'cancelled_reason', type: 'text', nullable: true })
  cancelledReason!: string | null;

  @Column({ name: 'platform_plan', type: 'jsonb' })
  platformPlan!: Plan;

  @Column({ name: 'support_plan', type: 'jsonb' })
  supportPlan!: Plan;

  @Column({ name: 'current_term_end', type: 'bigint', nullable: true, transformer: int64 })
  currentTermEnd!: number | null;

  @Column({ name: 'enabled_features', type: 'jsonb', nullable: true })
  EnabledFeatures!: string[] | null;
}
