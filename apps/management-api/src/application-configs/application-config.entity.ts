import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64 } from '@switchboard/persistence';

/** An application config; `applicationId` is unique across organizations. */
@Entity({ name: 'application_config' })
export class ApplicationConfigEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId!: string;

  @Column({ type: 'boolean', nullable: true })
  disabled!: boolean | null;

  @Column({ type: 'text', nullable: true })
  tag!: string | null;

  /** Kept in clear: it keys the HMAC of client tokens and webhook signatures. Never in the change log. */
  @Column({ name: 'shared_secret', type: 'text' })
  sharedSecret!: string;

  @Column({ name: 'created_on', type: 'bigint', transformer: int64 })
  createdOn!: number;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy!: string | null;

  @Column({ name: 'modified_on', type: 'bigint', transformer: int64 })
  modifiedOn!: number;

  @Column({ name: 'modified_by', type: 'text', nullable: true })
  modifiedBy!: string | null;
}
