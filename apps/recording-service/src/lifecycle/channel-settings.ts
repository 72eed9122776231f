import { Inject, Injectable } from '@nestjs/common';
import { ChannelRecordingSettingsSubject, DomainError } from '@switchboard/contracts';
import { JsonLogger, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RecordingServiceConfig } from '../config.js';

const TIMEOUT_MS = 2000;

/**
 * What the governing channel config says about recordings of a channel, asked from
 * management-api (`management-api.v1.channel-configs.recording`, messaging/recordings.ts) when a
 * channel recording opens.
 */
@Injectable()
export class ChannelSettings {
  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * `muxEnabled` of a new channel recording: RECORDINGS_MUX_ENABLED unless the channel config's
   * `recordingManagementOverride.muxDisabled` turns muxing off. An unknown application or no
   * answer keeps the service default: a recording is never refused for want of its config.
   */
  async muxEnabled(applicationId: string, channelId: string): Promise<boolean> {
    if (!this.config.recordingsMuxEnabled) return false;
    try {
      const settings = await this.nats.request(
        ChannelRecordingSettingsSubject,
        { applicationId, channelId },
        { timeoutMs: TIMEOUT_MS },
      );
      return !settings.muxDisabled;
    } catch (e) {
      if (!(e instanceof DomainError && e.code === 'NotFound')) {
        this.logger.event('warn', 'the channel config could not be read; the channel recording is muxed by default', {
          applicationId,
          channelId,
          error: (e as Error).message,
        });
      }
      return true;
    }
  }
}
