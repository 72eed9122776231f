import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DomainError, type CallerScope } from '@switchboard/contracts';
import { addressInCidrs, parseCidr, type Cidr } from '@switchboard/config';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config.js';
import { CredentialsService } from './credentials.service.js';

export type AuthenticatedRequest = FastifyRequest & { scope?: CallerScope };

/**
 * Interface A: the caller's address must be inside the admin CIDR allowlist (403 otherwise), and
 * it must carry `X-API-Key` or `Authorization: Bearer` (401 otherwise). Probes and metrics are open.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  private readonly allow: Cidr[];
  /** Allowlist decisions by caller address (few distinct callers; bounded). */
  private readonly decided = new Map<string, boolean>();

  constructor(
    @Inject(SERVICE_CONFIG) config: GatewayConfig,
    private readonly credentials: CredentialsService,
  ) {
    this.allow = config.adminCidrAllowlist.map((c) => parseCidr(c)!);
  }

  /** Synchronous for an API key whose verification is remembered (the common case); a promise otherwise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const url = request.url;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (!path.startsWith('/admin/') || path.endsWith('/openapi.json')) return true;
    if (!this.allowed(request.ip)) throw new DomainError('Forbidden', 'The admin API is not reachable from this address.');
    const key = request.headers['x-api-key'];
    const authorization = request.headers.authorization;
    if (typeof key === 'string' && key) {
      const cached = this.credentials.cachedApiKey(key, request.raw.socket);
      if (cached) {
        request.scope = cached;
        return true;
      }
      return this.credentials.fromApiKey(key).then((scope) => {
        request.scope = scope;
        return true;
      });
    }
    if (authorization?.startsWith('Bearer ')) {
      return this.credentials.fromBearer(authorization.slice(7).trim()).then((scope) => {
        request.scope = scope;
        return true;
      });
    }
    throw new DomainError('Unauthorized', 'An X-API-Key header or a Bearer token is required.');
  }

  private allowed(ip: string): boolean {
    let ok = this.decided.get(ip);
    if (ok === undefined) {
      ok = addressInCidrs(ip, this.allow);
      if (this.decided.size >= MAX_DECISIONS) this.decided.clear();
      this.decided.set(ip, ok);
    }
    return ok;
  }
}

const MAX_DECISIONS = 4096;
