import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Address, Contact } from '@switchboard/contracts';
import { int64 } from '@switchboard/persistence';

@Entity({ name: 'organization' })
export class OrganizationEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ name: 'payment_method_id', type: 'uuid', nullable: true })
  paymentMethodId?: string | null;

  @Column({ name: 'vat_number', type: 'text', nullable: true })
  vatNumber?: string | null;

  @Column({ type: 'text', nullable: true })
  industry?: string | null;

  @Column({ type: 'jsonb' })
  address!: Address;

  @Column({ name: 'primary_contact', type: 'jsonb' })
  primaryContact!: Contact;

  @Column({ name: 'additional_contacts', type: 'jsonb', nullable: true })
  additionalContacts!: Contact[] | null;

  /** Set by operators: the organization's keys and tokens are refused while true. */
  @Column({ type: 'boolean', default: false })
  disabled!: boolean;

  @Column({ name: 'created_on', type: 'bigint', transformer: int64 })
  createdOn!: number;

  @Column({ name: 'modified_on', type: 'bigint', transformer: int64 })
  modifiedOn!: number;
}
