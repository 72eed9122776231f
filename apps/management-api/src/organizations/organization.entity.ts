import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64 } from '@switchboard/persistence';

@Entity({ name: 'organization' })
export class OrganizationEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ name: 'created_on', type: 'bigint', transformer: int64 })
  createdOn!: number;

  @Column({ name: 'modified_on', type: 'bigint', transformer: int64 })
  modifiedOn!: number;
}
