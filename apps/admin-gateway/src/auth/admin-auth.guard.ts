import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, type CallerScope } from '@switchboard/contracts';
import { addressInCidrs, parseCidr, type Cidr } from '@switchboard/config';
import { bearerToken, HealthController, MetricsController, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config.js';
import { CredentialsService } from './credentials.service.js';

export type AuthenticatedRequest = FastifyRequest & { scope?: CallerScope };

/** Probes and metrics: open to any address, without a credential. */
const OPEN_CONTROLLERS: ReadonlySet<unknown> = new Set([HealthController, MetricsController]);

const WITHOUT_CREDENTIAL = 'switchboard:admin-without-credential';
/** A route of the admin host readable without a credential (the OpenAPI document); the address check still applies. */
export const WithoutCredential = () => SetMetadata(WITHOUT_CREDENTIAL, true);

/**
 * Interface A: the caller's address inside the admin CIDR allowlist (else 403), with `X-API-Key` or a
 * Bearer token (else 401). Decided by the route matched, never the raw URL, which `/%61dmin/` would evade.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  private readonly allow: Cidr[];
  /** Allowlist decisions by caller address (few distinct callers; bounded). */
  private readonly decided = new Map<string, boolean>();

  constructor(
    @Inject(SERVICE_CONFIG) config: GatewayConfig,
    private readonly credentials: CredentialsService,
    private readonly reflector: Reflector,
  ) {
    this.allow = config.adminCidrAllowlist.map((c) => parseCidr(c)!);
  }

  /** Synchronous for an API key whose verification is remembered (the common case); a promise otherwise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (OPEN_CONTROLLERS.has(context.getClass())) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!this.allowed(request.ip))
      throw new DomainError('Forbidden', 'The admin API is not reachable from this address.');
    if (this.reflector.getAllAndOverride<boolean>(WITHOUT_CREDENTIAL, [context.getHandler(), context.getClass()]))
      return true;
    const key = request.headers['x-api-key'];
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
    const token = bearerToken(request.headers.authorization);
    if (token !== undefined) {
      return this.credentials.fromBearer(token).then((scope) => {
        request.scope = scope;
        return true;
      });
    }
    throw new DomainError('Unauthorized', 'An X-API-Key header or a Bearer token is required.');
  }

  private allowed(ip: string): boolean {
    let inAllowlist = this.decided.get(ip);
    if (inAllowlist === undefined) {
      inAllowlist = addressInCidrs(ip, this.allow);
      if (this.decided.size >= MAX_DECISIONS) this.decided.clear();
      this.decided.set(ip, inAllowlist);
    }
    return inAllowlist;
  }
}

const MAX_DECISIONS = 4096;
