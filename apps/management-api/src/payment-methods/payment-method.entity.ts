import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64 } from '@switchboard/persistence';
import type { StoredCard } from './payment-card.js';

/** A payment method; `card` never holds a number or security code (a check constraint enforces it). */
@Entity({ name: 'payment_method' })
export class PaymentMethodEntity {
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

  @Column({ name: 'created_on', type: 'bigint', transformer: int64 })
  createdOn!: number;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy!: string | null;

  @Column({ name: 'modified_on', type: 'bigint', transformer: int64 })
  modifiedOn!: number;

  @Column({ name: 'modified_by', type: 'text', nullable: true })
  modifiedBy!: string | null;
}
