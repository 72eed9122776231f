import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Identity } from '@switchboard/contracts';
import { int64 } from '@switchboard/persistence';
import { AuditColumns } from '../common/audit-columns.js';

/** A user account of an organization, with its login identities (inline) and SDK download dates (Unix ms, 0: never). */
@Entity({ name: 'user_account' })
export class UserAccountEntity extends AuditColumns {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'svc_app_created', type: 'boolean' })
  svcAppCreated!: boolean;

  @Column({ name: 'svc_channel_created', type: 'boolean' })
  svcChannelCreated!: boolean;

  @Column({ name: 'svc_connection_created', type: 'boolean' })
  svcConnectionCreated!: boolean;

  @Column({ name: 'last_svc_android_download_date', type: 'bigint', transformer: int64 })
  lastSvcAndroidDownloadDate!: number;

  @Column({ name: 'last_svc_java_download_date', type: 'bigint', transformer: int64 })
  lastSvcJavaDownloadDate!: number;

  @Column({ name: 'last_svc_net_download_date', type: 'bigint', transformer: int64 })
  lastSvcNetDownloadDate!: number;

  @Column({ name: 'last_svc_unity_download_date', type: 'bigint', transformer: int64 })
  lastSvcUnityDownloadDate!: number;

  @Column({ name: 'last_svc_hololens_download_date', type: 'bigint', transformer: int64 })
  lastSvcHololensDownloadDate!: number;

  @Column({ name: 'last_svc_web_download_date', type: 'bigint', transformer: int64 })
  lastSvcWebDownloadDate!: number;

  @Column({ name: 'last_svc_ios_download_date', type: 'bigint', transformer: int64 })
  lastSvcIosDownloadDate!: number;

  @Column({ name: 'last_svc_macos_download_date', type: 'bigint', transformer: int64 })
  lastSvcMacosDownloadDate!: number;

  @Column({ name: 'last_svc_tvos_download_date', type: 'bigint', transformer: int64 })
  lastSvcTVosDownloadDate!: number;

  @Column({ name: 'last_svc_uwp_download_date', type: 'bigint', transformer: int64 })
  lastSvcUwpDownloadDate!: number;

  @Column({ name: 'last_svc_xamarin_download_date', type: 'bigint', transformer: int64 })
  lastSvcXamarinDownloadDate!: number;

  @Column({ name: 'first_name', type: 'text', nullable: true })
  firstName!: string | null;

  @Column({ name: 'last_name', type: 'text', nullable: true })
  lastName!: string | null;

  @Column({ name: 'username', type: 'text', nullable: true })
  username!: string | null;

  @Column({ name: 'nickname', type: 'text', nullable: true })
  nickname!: string | null;

  @Column({ name: 'email_address', type: 'text', nullable: true })
  emailAddress!: string | null;

  @Column({ name: 'phone_number', type: 'text', nullable: true })
  phoneNumber!: string | null;

  @Column({ name: 'picture_url', type: 'text', nullable: true })
  pictureUrl!: string | null;

  @Column({ name: 'role', type: 'text', nullable: true })
  role!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  identities!: Identity[] | null;
}
