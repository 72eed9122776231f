import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { ChannelRecordingSettingsSubject, DomainError } from '@switchboard/contracts';
import {
  ApplicationCache,
  JsonLogger,
  NatsClient,
  ReadinessService,
  SERVICE_CONFIG,
  watchApplicationChanges,
  type ApplicationChangesWatch,
} from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';

/** Bounds the memory of the cache (channels of every application). */
const MAX_ENTRIES = 100000;

/**
 * The `recordingEnabled` of the channel config governing a channel, asked from management-api when
 * a join is about to activate it, cached per replica and dropped on `applications.changed`; never
 * blocks a join for good (README, "Channel config `recordingEnabled`").
 */
@Injectable()
export class ChannelRecordingDefaults implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly cache: ApplicationCache<boolean | null>;
  private changes?: ApplicationChangesWatch;
  private failures = 0;

  constructor(
    private readonly nats: NatsClient,
    private readonly readiness: ReadinessService,
    private readonly logger: JsonLogger,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {
    this.cache = new ApplicationCache({ ttlMs: config.channelConfigCacheMs, maxEntries: MAX_ENTRIES });
  }

  onApplicationBootstrap() {
    this.changes = watchApplicationChanges(this.nats, (applicationId) => this.invalidate(applicationId), {
      readiness: this.readiness,
      logger: this.logger,
    });
  }

  beforeApplicationShutdown() {
    this.changes?.stop();
  }

  invalidate(applicationId: string): void {
    this.cache.invalidate(applicationId);
  }

  /**
   * The governing channel config's `recordingEnabled` (null: not set, no config, or management-api
   * did not answer), from the cache when fresh.
   */
  async recordingEnabled(applicationId: string, channelId: string): Promise<boolean | null> {
    try {
      return await this.cache.get(applicationId, channelId, () => this.fetch(applicationId, channelId));
    } catch (e) {
      // Once in a while, not per join: a registry without management-api would log every activation.
      if (this.failures++ % 100 === 0) {
        this.logger.event('warn', 'channel config not read; the channel does not record by default', {
          applicationId,
          channelId,
          error: (e as Error).message,
          failures: this.failures,
        });
      }
      return null;
    }
  }

  /** Asks management-api; an application it does not know has no channel config (a settled answer, kept). */
  private async fetch(applicationId: string, channelId: string): Promise<boolean | null> {
    try {
      return (
        await this.nats.request(
          ChannelRecordingSettingsSubject,
          { applicationId, channelId },
          { timeoutMs: this.config.channelConfigTimeoutMs },
        )
      ).recordingEnabled;
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound') return null;
      throw e;
    }
  }
}
