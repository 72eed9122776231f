import { Inject, Injectable } from '@nestjs/common';
import { DomainError, Subjects, type CallerScope } from '@switchboard/contracts';
import { BearerVerifier, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { createHash, hash } from 'node:crypto';
import type { GatewayConfig } from '../config.js';

interface CacheEntry {
  scope: CallerScope | null;
  expires: number;
}

const MAX_CACHE_ENTRIES = 10000;
const API_KEY = /^[\x21-\x7e]{8,256}$/;

/** SHA-256 (base64url) of a key: the one-shot `crypto.hash` where the runtime has it. */
const sha256: (value: string) => string =
  typeof hash === 'function' ? (value) => hash('sha256', value, 'base64url') : (value) => createHash('sha256').update(value).digest('base64url');

/**
 * Turns a credential into a caller scope. API keys are verified by management-api over NATS and
 * remembered briefly (hashed, bounded); Bearer tokens are verified locally against the issuer's JWKS
 * by the kit's BearerVerifier (the same check as management-api's).
 */
@Injectable()
export class CredentialsService {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastKeyOf = new WeakMap<object, { key: string; id: string }>();
  private readonly bearer: BearerVerifier;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly nats: NatsClient,
  ) {
    this.bearer = new BearerVerifier(config);
  }

  /**
   * The scope of an API key while its verification is remembered (no await: the hot path of every
   * interface A request); undefined when management-api must be asked (`fromApiKey`).
   */
  cachedApiKey(value: string, connection?: object): CallerScope | undefined {
    if (!API_KEY.test(value)) throw new DomainError('Unauthorized', 'The API key is not valid.');
    const hit = this.cache.get(this.idOf(value, connection));
    return hit && hit.expires > Date.now() ? this.orReject(hit.scope) : undefined;
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
    if (hit && hit.expires > now) return this.orReject(hit.scope);
    const answer = await this.nats.request(Subjects.apiKeyVerify, { apiKey: value });
    const scope: CallerScope | null = answer.valid ? { organizationId: answer.organizationId, operator: answer.operator, principal: answer.keyId } : null;
    const ttl = scope ? this.config.apiKeyCacheTtlMs : this.config.apiKeyNegativeCacheTtlMs;
    if (ttl > 0) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(id, { scope, expires: now + ttl });
    }
    return this.orReject(scope);
  }

  fromBearer(token: string): Promise<CallerScope> {
    return this.bearer.verify(token);
  }

  private orReject(scope: CallerScope | null): CallerScope {
    if (!scope) throw new DomainError('Unauthorized', 'The API key is not valid.');
    return scope;
  }
}
