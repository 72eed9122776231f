import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { AuditColumns } from '../common/audit-columns.js';

/** An API key; only the SHA-256 of its value is stored. */
@Entity({ name: 'api_key' })
export class ApiKeyEntity extends AuditColumns {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Index()
  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Index({ unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash!: string;

  @Column({ type: 'text', nullable: true })
  tag!: string | null;

  /** Operator keys reach every organization's runtime (media servers, diagnostics, application list). */
  @Column({ type: 'boolean', default: false })
  operator!: boolean;

  /** A disabled key is refused like an unknown one (401) until it is enabled again. */
  @Column({ type: 'boolean', default: false })
  disabled!: boolean;
}
