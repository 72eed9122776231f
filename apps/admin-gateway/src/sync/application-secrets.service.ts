import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { RuntimeSubjects, type ResolvedApplication } from '@switchboard/contracts';
import {
  ApplicationCache,
  JsonLogger,
  NatsClient,
  ReadinessService,
  SERVICE_CONFIG,
  watchApplicationChanges,
  type ApplicationChangesWatch,
} from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';

const MAX_ENTRIES = 10000;

/**
 * Shared secrets of applications from management-api, kept per replica until APPLICATION_CACHE_TTL_MS
 * or an `applications.changed` notice; an answer that raced with a change is not kept.
 */
@Injectable()
export class ApplicationSecrets implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly cache: ApplicationCache<ResolvedApplication>;
  private changes?: ApplicationChangesWatch;

  constructor(
    @Inject(SERVICE_CONFIG) config: GatewayConfig,
    private readonly nats: NatsClient,
    private readonly readiness: ReadinessService,
    private readonly logger: JsonLogger,
  ) {
    this.cache = new ApplicationCache({ ttlMs: config.applicationCacheTtlMs, maxEntries: MAX_ENTRIES });
  }

  onApplicationBootstrap() {
    this.changes = watchApplicationChanges(this.nats, (applicationId) => this.invalidate(applicationId), {
      readiness: this.readiness,
      logger: this.logger,
    });
  }

  onModuleDestroy() {
    this.changes?.stop();
  }

  invalidate(applicationId: string): void {
    this.cache.invalidate(applicationId);
  }

  /**
   * The application, from the cache when fresh; `maxAgeMs` asks for a fresher copy (e.g. after a signature mismatch).
   */
  resolve(applicationId: string, maxAgeMs?: number): Promise<ResolvedApplication> {
    return this.cache.get(
      applicationId,
      '',
      () => this.nats.request(RuntimeSubjects.resolveApplication, { applicationId }),
      maxAgeMs,
    );
  }

  /** Age of the cached entry in ms (undefined when none). */
  ageOf(applicationId: string): number | undefined {
    return this.cache.ageOf(applicationId, '');
  }
}
