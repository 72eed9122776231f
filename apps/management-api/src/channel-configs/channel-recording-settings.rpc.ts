import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  channelRecordingSettingsRequest,
  ChannelRecordingSettingsSubject,
  DomainError,
  selectChannelConfig,
  type ChannelRecordingSettings,
} from '@switchboard/contracts';
import type { DataSource } from 'typeorm';

interface ConfigRow {
  id: string;
  channelIdPattern: string;
  priority: number;
  default: boolean;
  recordingEnabled: boolean | null;
  muxDisabled: boolean | null;
}

/**
 * `management-api.v1.channel-configs.recording` (messaging/recordings.ts): the recording fields of
 * the channel config governing a channel, for recording-service. Internal, across organizations.
 */
@Controller()
export class ChannelRecordingSettingsRpc {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  @MessagePattern(ChannelRecordingSettingsSubject)
  async settings(@Payload() body: unknown): Promise<ChannelRecordingSettings> {
    const request = channelRecordingSettingsRequest.parse(body);
    const apps = (await this.ds.query('SELECT id FROM management.application_config WHERE application_id = $1', [
      request.applicationId,
    ])) as Array<{ id: string }>;
    if (!apps[0]) throw new DomainError('NotFound', `No application '${request.applicationId.slice(0, 128)}'.`);
    const configs = (await this.ds.query(
      `SELECT id, channel_id_pattern AS "channelIdPattern", priority, is_default AS "default", recording_enabled AS "recordingEnabled",
              (recording_management_override ->> 'muxDisabled')::boolean AS "muxDisabled"
         FROM management.channel_config WHERE application_config_id = $1 ORDER BY created_on, id`,
      [apps[0].id],
    )) as ConfigRow[];
    const governing = selectChannelConfig(configs, request.channelId);
    return {
      channelConfigId: governing?.id ?? null,
      recordingEnabled: governing?.recordingEnabled ?? null,
      muxDisabled: governing?.muxDisabled === true,
    };
  }
}
