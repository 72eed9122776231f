import { Column, Entity, PrimaryColumn } from 'typeorm';
import { AuditColumns } from '../common/audit-columns.js';

/** An application config; `applicationId` is unique across organizations. */
@Entity({ name: 'application_config' })
export class ApplicationConfigEntity extends AuditColumns {
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
}
