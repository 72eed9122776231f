import { Column, Entity, PrimaryColumn } from 'typeorm';
import { AuditColumns } from '../common/audit-columns.js';
import type { StoredCard } from './payment-card.js';

/** A payment method; `card` never holds a number or security code (a check constraint enforces it). */
@Entity({ name: 'payment_method' })
export class PaymentMethodEntity extends AuditColumns {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'text', nullable: true })
  type!: string | null;

  @Column({ type: 'text', nullable: true })
  status!: string | null;

  @Column({ type: 'jsonb' })
  card!: StoredCard;
}
