import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { RuntimeSubjects, type ResolvedApplication } from '@switchboard/contracts';
import { JsonLogger, NatsClient, ReadinessService, SERVICE_CONFIG, watchApplicationChanges, type ApplicationChangesWatch } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';

interface Entry {
  application: ResolvedApplication;
  fetchedAt: number;
}

const MAX_ENTRIES = 10000;

/**
 * Shared secrets of applications, fetched from management-api (`management-api.v1.applications.resolve`)
 * and kept per replica: an entry lives at most APPLICATION_CACHE_TTL_MS and is dropped as soon as
 * `management-api.v1.applications.changed` names its application. Concurrent look-ups of one
 * application share one request; an answer that raced with a change is not kept.
 */
@Injectable()
export class ApplicationSecrets implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<ResolvedApplication>>();
  private readonly generation = new Map<string, number>();
  private changes?: ApplicationChangesWatch;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly nats: NatsClient,
    private readonly readiness: ReadinessService,
    private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap() {
    this.changes = watchApplicationChanges(this.nats, (applicationId) => this.invalidate(applicationId), { readiness: this.readiness, logger: this.logger });
  }

  onModuleDestroy() {
    this.changes?.stop();
  }

  invalidate(applicationId: string): void {
    this.cache.delete(applicationId);
    this.generation.set(applicationId, (this.generation.get(applicationId) ?? 0) + 1);
  }

  /** The application, from the cache when fresh; `maxAgeMs` asks for a fresher copy (e.g. after a signature mismatch). */
  async resolve(applicationId: string, maxAgeMs = this.config.applicationCacheTtlMs): Promise<ResolvedApplication> {
    const hit = this.cache.get(applicationId);
    if (hit && Date.now() - hit.fetchedAt <= Math.min(maxAgeMs, this.config.applicationCacheTtlMs)) return hit.application;
    const pending = this.inflight.get(applicationId);
    if (pending) return pending;
    const generation = this.generation.get(applicationId) ?? 0;
    const request = this.nats
      .request(RuntimeSubjects.resolveApplication, { applicationId })
      .then((application) => {
        if ((this.generation.get(applicationId) ?? 0) === generation && this.config.applicationCacheTtlMs > 0) {
          if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
          this.cache.set(applicationId, { application, fetchedAt: Date.now() });
        }
        return application;
      })
      .finally(() => this.inflight.delete(applicationId));
    this.inflight.set(applicationId, request);
    return request;
  }

  /** Age of the cached entry in ms (undefined when none). */
  ageOf(applicationId: string): number | undefined {
    const hit = this.cache.get(applicationId);
    return hit ? Date.now() - hit.fetchedAt : undefined;
  }
}
