import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DomainError, Subjects, type CallerScope } from '@switchboard/contracts';
import {
  BearerVerifier,
  JsonLogger,
  NatsClient,
  ReadinessService,
  SERVICE_CONFIG,
  watchOrganizationChanges,
  type ApplicationChangesWatch,
} from '@switchboard/service-kit';
import { createHash, hash } from 'node:crypto';
import type { GatewayConfig } from '../config.js';

interface CacheEntry {
  scope: CallerScope | null;
  expires: number;
  /** Set when the key's organization is disabled (refused with 403 while the entry lives). */
  disabledOrganization?: string;
}

const MAX_CACHE_ENTRIES = 10000;
const API_KEY = /^[\x21-\x7e]{8,256}$/;

/** SHA-256 (base64url) of a key: the one-shot `crypto.hash` where the runtime has it. */
const sha256: (value: string) => string =
  typeof hash === 'function'
    ? (value) => hash('sha256', value, 'base64url')
    : (value) => createHash('sha256').update(value).digest('base64url');

/**
 * Turns a credential into a caller scope: API keys verified by management-api and remembered briefly,
 * Bearer tokens verified locally; a disabled organization's are refused (README: interface A).
 */
@Injectable()
export class CredentialsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * Whether the organization of a Bearer token is disabled, by organization id (dropped by the notice like key
   * verdicts).
   */
  private readonly organizations = new Map<string, { disabled: boolean; expires: number }>();
  /** Bumped by each organization notice: a verdict asked for before one is not kept (it may predate the change). */
  private notices = 0;
  private changes?: ApplicationChangesWatch;
  private readonly lastKeyOf = new WeakMap<object, { key: string; id: string }>();
  private readonly bearer: BearerVerifier;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly nats: NatsClient,
    private readonly readiness: ReadinessService,
    private readonly logger: JsonLogger,
  ) {
    this.bearer = new BearerVerifier(config);
  }

  onApplicationBootstrap() {
    this.changes = watchOrganizationChanges(this.nats, (id) => this.forgetOrganization(id), {
      readiness: this.readiness,
      logger: this.logger,
    });
  }

  onModuleDestroy() {
    this.changes?.stop();
  }

  /**
   * Drops every remembered verdict about the keys of an organization (it, or one of its keys, was disabled or
   * enabled), and every refusal: a disabled key's refusal names no organization, and it may be enabled again.
   */
  forgetOrganization(organizationId: string): void {
    this.notices++;
    this.organizations.delete(organizationId);
    for (const [id, entry] of this.cache) {
      const refused = !entry.scope && !entry.disabledOrganization;
      if (refused || entry.scope?.organizationId === organizationId || entry.disabledOrganization === organizationId)
        this.cache.delete(id);
    }
  }

  /**
   * The scope of an API key while its verification is remembered (no await: the hot path of every
   * interface A request); undefined when management-api must be asked (`fromApiKey`).
   */
  cachedApiKey(value: string, connection?: object): CallerScope | undefined {
    if (!API_KEY.test(value)) throw new DomainError('Unauthorized', 'The API key is not valid.');
    const hit = this.cache.get(this.idOf(value, connection));
    return hit && hit.expires > Date.now() ? this.orReject(hit) : undefined;
  }

  /**
   * The cache id (SHA-256) of a key. A keep-alive connection sends the same key request after
   * request: its last key and id are remembered with the connection (and go with it), so the
   * digest is computed once per connection and key rather than once per request.
   */
  private idOf(value: string, connection?: object): string {
    if (!connection) return sha256(value);
    const last = this.lastKeyOf.get(connection);
    if (last?.key === value) return last.id;
    const id = sha256(value);
    this.lastKeyOf.set(connection, { key: value, id });
    return id;
  }

  async fromApiKey(value: string): Promise<CallerScope> {
    if (!API_KEY.test(value)) throw new DomainError('Unauthorized', 'The API key is not valid.');
    const id = sha256(value);
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && hit.expires > now) return this.orReject(hit);
    const notices = this.notices;
    const answer = await this.nats.request(Subjects.apiKeyVerify, { apiKey: value });
    const entry: CacheEntry = answer.valid
      ? {
          scope: { organizationId: answer.organizationId, operator: answer.operator, principal: answer.keyId },
          expires: 0,
        }
      : {
          scope: null,
          expires: 0,
          ...(answer.organizationDisabled && answer.organizationId
            ? { disabledOrganization: answer.organizationId }
            : {}),
        };
    // A disabled organization's key is a known key: remembered as long as a valid one (the notice drops it).
    const ttl =
      entry.scope || entry.disabledOrganization ? this.config.apiKeyCacheTtlMs : this.config.apiKeyNegativeCacheTtlMs;
    if (ttl > 0 && notices === this.notices) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(id, { ...entry, expires: now + ttl });
    }
    return this.orReject(entry);
  }

  async fromBearer(token: string): Promise<CallerScope> {
    const scope = await this.bearer.verify(token);
    if (scope.organizationId !== null && !scope.operator && (await this.organizationDisabled(scope.organizationId))) {
      throw new DomainError('Forbidden', 'The organization of this token is disabled.');
    }
    return scope;
  }

  /**
   * Asked of management-api and remembered like a key's verdict (API_KEY_CACHE_TTL_MS, or until the organization's
   * notice).
   */
  private async organizationDisabled(organizationId: string): Promise<boolean> {
    const now = Date.now();
    const hit = this.organizations.get(organizationId);
    if (hit && hit.expires > now) return hit.disabled;
    const notices = this.notices;
    const { disabled } = await this.nats.request(Subjects.organizationStatus, { organizationId });
    if (this.config.apiKeyCacheTtlMs > 0 && notices === this.notices) {
      if (this.organizations.size >= MAX_CACHE_ENTRIES)
        this.organizations.delete(this.organizations.keys().next().value as string);
      this.organizations.set(organizationId, { disabled, expires: now + this.config.apiKeyCacheTtlMs });
    }
    return disabled;
  }

  private orReject(entry: CacheEntry): CallerScope {
    if (entry.disabledOrganization) throw new DomainError('Forbidden', 'The organization of this API key is disabled.');
    if (!entry.scope) throw new DomainError('Unauthorized', 'The API key is not valid.');
    return entry.scope;
  }
}
