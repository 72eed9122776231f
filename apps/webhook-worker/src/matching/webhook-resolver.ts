import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  DomainError,
  WebhookMessagingValidators,
  WebhookSubjects,
  type WebhooksResolveResponse,
} from '@switchboard/contracts';
import {
  ApplicationCache,
  NatsClient,
  watchApplicationChanges,
  type ApplicationChangesWatch,
} from '@switchboard/service-kit';
import type { WebhookWorkerConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { InjectWebhookConfig } from '../tokens.js';

/** The webhooks of an application (and channel), or null for an application management-api does not know. */
export type Resolution = WebhooksResolveResponse | null;

/** The last answer management-api gave for a key, kept to stand in while it cannot answer. */
interface Kept {
  value: Resolution;
  readAt: number;
  /** Since when it stands in (undefined: management-api answers). */
  standingInSince?: number;
}

const MAX_KEYS = 100_000;

/**
 * Resolves webhooks through `management-api.v1.webhooks.resolve`, caching each answer per
 * `(applicationId, channelId)` for `WEBHOOK_CONFIG_CACHE_MS` (0: no cache) in service-kit's ApplicationCache.
 * Concurrent lookups of one key share one request; `management-api.v1.applications.changed` drops every entry
 * of the application (and keeps answers to requests in flight then from being cached). `NotFound` (unknown
 * application) is cached as null; any other failure is thrown and not cached, unless a configuration of the key
 * was read within `WEBHOOK_CONFIG_STALE_MS`: then that one answers (README "Path of an event").
 */
@Injectable()
export class WebhookResolver implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookResolver');
  private readonly cache: ApplicationCache<Resolution>;
  private readonly kept = new Map<string, Kept>();
  private changes?: ApplicationChangesWatch;

  constructor(
    private readonly nats: NatsClient,
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
    private readonly metrics: WebhookMetrics,
  ) {
    this.cache = new ApplicationCache({ ttlMs: config.configCacheMs, maxEntries: MAX_KEYS });
  }

  onApplicationBootstrap(): void {
    this.changes = watchApplicationChanges(this.nats, (applicationId) => this.invalidate(applicationId));
  }

  onApplicationShutdown(): void {
    this.changes?.stop();
  }

  /** Resolves once the change subscription is active (tests, start-up ordering). */
  async subscribed(): Promise<void> {
    await this.changes?.subscribed;
  }

  invalidate(applicationId: string): void {
    this.cache.invalidate(applicationId);
    const prefix = `${applicationId}\u0000`;
    for (const key of this.kept.keys()) if (key.startsWith(prefix)) this.forget(key);
  }

  resolve(applicationId: string, channelId: string | null): Promise<Resolution> {
    return this.cache.get(applicationId, channelId ?? '', (current) => {
      const key = `${applicationId}\u0000${channelId ?? ''}`;
      return this.request(applicationId, channelId).then(
        (answer) => {
          // Changed while we asked: the answer may predate the change; not kept to stand in either.
          if (current()) this.keep(key, answer);
          return answer;
        },
        (e: unknown) => this.standIn(key, e),
      );
    });
  }

  private async request(applicationId: string, channelId: string | null): Promise<Resolution> {
    try {
      // An answer off the contract is a failure (not cached; the events wait), named in the logs.
      return WebhookMessagingValidators.WebhooksResolveResponse.parse(
        await this.nats.request(WebhookSubjects.resolve, { applicationId, channelId }),
      );
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound') return null;
      throw e;
    }
  }

  private keep(key: string, value: Resolution): void {
    if (this.config.configStaleMs <= 0) return;
    const previous = this.kept.get(key);
    if (previous?.standingInSince !== undefined) {
      this.logger.log(
        `webhook configuration of ${describeKey(key)} read again from management-api after ${Date.now() - previous.standingInSince} ms on the kept one`,
      );
      this.metrics.configStaleKeys.dec();
    }
    // Most recently read last, so trimming drops the keys read the longest ago.
    this.kept.delete(key);
    this.kept.set(key, { value, readAt: Date.now() });
    if (this.kept.size > MAX_KEYS) {
      for (const k of this.kept.keys()) {
        if (this.kept.size <= MAX_KEYS * 0.9) break;
        this.forget(k);
      }
    }
  }

  private forget(key: string): void {
    if (this.kept.get(key)?.standingInSince !== undefined) this.metrics.configStaleKeys.dec();
    this.kept.delete(key);
  }

  /** Management-api failed to answer: the kept configuration of the key if recent enough, else the failure. */
  private standIn(key: string, error: unknown): Resolution {
    const kept = this.kept.get(key);
    const now = Date.now();
    const age = kept ? now - kept.readAt : Infinity;
    const reason = error instanceof Error ? error.message : String(error);
    if (!kept || age > this.config.configStaleMs) {
      if (kept) {
        this.logger.warn(
          `webhook configuration of ${describeKey(key)} unavailable (${reason}); the one kept is ${age} ms old, over WEBHOOK_CONFIG_STALE_MS: events wait`,
        );
        this.forget(key);
      }
      throw error instanceof Error ? error : new Error(reason);
    }
    if (kept.standingInSince === undefined) {
      kept.standingInSince = now;
      this.metrics.configStaleKeys.inc();
      this.logger.warn(
        `webhook configuration of ${describeKey(key)} unavailable (${reason}): using the one read ${age} ms ago, for at most ${this.config.configStaleMs - age} ms more`,
      );
    }
    this.metrics.configStale.inc();
    return kept.value;
  }
}

function describeKey(key: string): string {
  const [applicationId, channelId] = key.split('\u0000');
  return channelId
    ? `application ${applicationId}, channel ${channelId}`
    : `application ${applicationId} (outside channels)`;
}
