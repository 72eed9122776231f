import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { ChannelRecordingSettingsSubject, DomainError } from '@switchboard/contracts';
import { JsonLogger, NatsClient, ReadinessService, SERVICE_CONFIG, watchApplicationChanges, type ApplicationChangesWatch } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';

interface Entry {
  recordingEnabled: boolean | null;
  fetchedAt: number;
}

/** Bounds the memory of the cache (channels of every application); the oldest entry goes first. */
const MAX_ENTRIES = 100000;

/**
 * The `recordingEnabled` of the channel config governing a channel, asked from management-api
 * (`management-api.v1.channel-configs.recording`, messaging/recordings.ts) when a join is about to
 * activate a channel, and kept per replica per (application, channel) for at most
 * CHANNEL_CONFIG_CACHE_MS; every entry of an application is dropped as soon as
 * `management-api.v1.applications.changed` names it (every replica subscribes, no queue group).
 * Concurrent look-ups of one channel share one request; an answer that raced with a change is used
 * once but not kept.
 *
 * Never blocks a join for good: when management-api does not answer within
 * CHANNEL_CONFIG_TIMEOUT_MS (or is not running), the answer is null (no default: the channel does
 * not record unless a level says so) and nothing is cached, so the next activation asks again.
 */
@Injectable()
export class ChannelRecordingDefaults implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<boolean | null>>();
  private readonly generation = new Map<string, number>();
  private changes?: ApplicationChangesWatch;
  private failures = 0;

  constructor(
    private readonly nats: NatsClient,
    private readonly readiness: ReadinessService,
    private readonly logger: JsonLogger,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  onApplicationBootstrap() {
    this.changes = watchApplicationChanges(this.nats, (applicationId) => this.invalidate(applicationId), { readiness: this.readiness, logger: this.logger });
  }

  beforeApplicationShutdown() {
    this.changes?.stop();
  }

  invalidate(applicationId: string): void {
    this.generation.set(applicationId, (this.generation.get(applicationId) ?? 0) + 1);
    const prefix = `${applicationId.length}:${applicationId}/`;
    for (const key of this.cache.keys()) if (key.startsWith(prefix)) this.cache.delete(key);
  }

  /**
   * The governing channel config's `recordingEnabled` (null: not set, no config, or management-api
   * did not answer), from the cache when fresh.
   */
  async recordingEnabled(applicationId: string, channelId: string): Promise<boolean | null> {
    const key = cacheKey(applicationId, channelId);
    const hit = this.fresh(key);
    if (hit !== undefined) return hit.recordingEnabled;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const request = this.fetch(applicationId, channelId, key).finally(() => this.inflight.delete(key));
    this.inflight.set(key, request);
    return request;
  }

  private fresh(key: string): Entry | undefined {
    const hit = this.cache.get(key);
    return hit && Date.now() - hit.fetchedAt <= this.config.channelConfigCacheMs ? hit : undefined;
  }

  private async fetch(applicationId: string, channelId: string, key: string): Promise<boolean | null> {
    const generation = this.generation.get(applicationId) ?? 0;
    let recordingEnabled: boolean | null;
    try {
      recordingEnabled = (await this.nats.request(ChannelRecordingSettingsSubject, { applicationId, channelId }, { timeoutMs: this.config.channelConfigTimeoutMs })).recordingEnabled;
    } catch (e) {
      // An application management-api does not know has no channel config: a settled answer.
      if (!(e instanceof DomainError && e.code === 'NotFound')) {
        // Once in a while, not per join: a registry without management-api would log every activation.
        if (this.failures++ % 100 === 0) {
          this.logger.event('warn', 'channel config not read; the channel does not record by default', { applicationId, channelId, error: (e as Error).message, failures: this.failures });
        }
        return null;
      }
      recordingEnabled = null;
    }
    if ((this.generation.get(applicationId) ?? 0) === generation && this.config.channelConfigCacheMs > 0) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, { recordingEnabled, fetchedAt: Date.now() });
    }
    return recordingEnabled;
  }
}

/** Length-prefixed, so that no application id is a prefix of another's keys. */
function cacheKey(applicationId: string, channelId: string): string {
  return `${applicationId.length}:${applicationId}/${channelId}`;
}
