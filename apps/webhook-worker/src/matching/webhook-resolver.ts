import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { DomainError, RuntimeSubjects, WebhookMessagingValidators, WebhookSubjects, type WebhooksResolveResponse } from '@switchboard/contracts';
import { NatsClient } from '@switchboard/service-kit';
import type { WebhookWorkerConfig } from '../config.js';
import { InjectWebhookConfig } from '../tokens.js';

/** The webhooks of an application (and channel), or null for an application management-api does not know. */
export type Resolution = WebhooksResolveResponse | null;

interface Entry {
  expires: number;
  value: Promise<Resolution>;
}

const decoder = new TextDecoder();

/**
 * Resolves webhooks through `management-api.v1.webhooks.resolve`, caching each answer per
 * `(applicationId, channelId)` for `WEBHOOK_CONFIG_CACHE_MS` (0: no cache). Concurrent lookups of
 * one key share one request. `management-api.v1.applications.changed` drops every entry of the
 * application (and keeps answers to requests that were in flight then from being cached).
 * `NotFound` (unknown application) is an answer (null) and is cached; any other failure is
 * thrown and not cached.
 */
@Injectable()
export class WebhookResolver implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookResolver');
  private readonly cache = new Map<string, Entry>();
  private readonly generations = new Map<string, number>();
  private subscription: Subscription | undefined;
  private closed = false;

  constructor(
    private readonly nats: NatsClient,
    @InjectWebhookConfig() private readonly config: WebhookWorkerConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.subscribe();
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.subscription?.unsubscribe();
  }

  /** Resolves once the change subscription is active (tests, start-up ordering). */
  async subscribed(): Promise<void> {
    while (!this.subscription && !this.closed) await new Promise((r) => setTimeout(r, 20));
  }

  private async subscribe(): Promise<void> {
    const nc = await this.nats.connection$();
    if (this.closed) return;
    // No queue group: every replica drops its own cache.
    this.subscription = nc.subscribe(this.nats.subject(RuntimeSubjects.applicationChanged), {
      callback: (err, msg) => {
        if (err) return;
        const applicationId = changedApplicationId(decoder.decode(msg.data));
        if (applicationId) this.invalidate(applicationId);
      },
    });
  }

  invalidate(applicationId: string): void {
    this.generations.set(applicationId, (this.generations.get(applicationId) ?? 0) + 1);
    const prefix = `${applicationId}\u0000`;
    for (const key of this.cache.keys()) if (key.startsWith(prefix)) this.cache.delete(key);
  }

  resolve(applicationId: string, channelId: string | null): Promise<Resolution> {
    const key = `${applicationId}\u0000${channelId ?? ''}`;
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.value;
    const generation = this.generations.get(applicationId) ?? 0;
    const value = this.request(applicationId, channelId);
    if (this.config.configCacheMs > 0) {
      const entry: Entry = { expires: now + this.config.configCacheMs, value };
      this.cache.set(key, entry);
      value.then(
        () => {
          // Changed while we asked: the answer may predate the change, keep it out of the cache.
          if ((this.generations.get(applicationId) ?? 0) !== generation && this.cache.get(key) === entry) this.cache.delete(key);
        },
        () => {
          if (this.cache.get(key) === entry) this.cache.delete(key);
        },
      );
      if (this.cache.size > 100_000) this.sweep(now);
    }
    return value;
  }

  private async request(applicationId: string, channelId: string | null): Promise<Resolution> {
    try {
      // An answer off the contract is a failure (not cached; the events wait), named in the logs.
      return WebhookMessagingValidators.WebhooksResolveResponse.parse(await this.nats.request(WebhookSubjects.resolve, { applicationId, channelId }));
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound') return null;
      throw e;
    }
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.cache) if (entry.expires <= now) this.cache.delete(key);
    this.logger.debug(`resolution cache swept: ${this.cache.size} entries left`);
  }
}

/** `{ pattern, data: { applicationId } }` (the project's packet shape) or a bare `{ applicationId }`. */
export function changedApplicationId(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { applicationId?: unknown; data?: { applicationId?: unknown } };
    const id = parsed?.data?.applicationId ?? parsed?.applicationId;
    return typeof id === 'string' && id.length > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}
