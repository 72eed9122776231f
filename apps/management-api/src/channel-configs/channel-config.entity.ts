import { Column, Entity, PrimaryColumn } from 'typeorm';
import type {
  CodecConfig,
  McuConfig,
  RecordingManagementOverride,
  RtmpConfig,
  SfuConfig,
  VideoEncoding,
} from '@switchboard/contracts';
import { AuditColumns } from '../common/audit-columns.js';

/** A channel config; at most one `default` per application config (partial unique index). */
@Entity({ name: 'channel_config' })
export class ChannelConfigEntity extends AuditColumns {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'application_config_id', type: 'uuid' })
  applicationConfigId!: string;

  @Column({ name: 'channel_id_pattern', type: 'text' })
  channelIdPattern!: string;

  @Column({ name: 'recording_enabled', type: 'boolean', nullable: true })
  recordingEnabled!: boolean | null;

  @Column({ name: 'is_default', type: 'boolean' })
  default!: boolean;

  @Column({ type: 'integer' })
  priority!: number;

  @Column({ name: 'connection_stats_interval', type: 'integer', nullable: true })
  connectionStatsInterval!: number | null;

  @Column({ name: 'bandwidth_adaptation_policy', type: 'text' })
  bandwidthAdaptationPolicy!: string;

  @Column({ type: 'jsonb' })
  codec!: CodecConfig;

  @Column({ type: 'jsonb' })
  sfu!: SfuConfig;

  @Column({ type: 'jsonb' })
  mcu!: McuConfig;

  @Column({ type: 'jsonb' })
  rtmp!: RtmpConfig;

  @Column({ name: 'recording_management_override', type: 'jsonb' })
  recordingManagementOverride!: RecordingManagementOverride;

  @Column({ name: 'video_encodings', type: 'jsonb' })
  videoEncodings!: VideoEncoding[];
}
