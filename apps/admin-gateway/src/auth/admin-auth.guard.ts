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

  constructor(
    @Inject(SERVICE_CONFIG) config: GatewayConfig,
    private readonly credentials: CredentialsService,
  ) {
    this.allow = config.adminCidrAllowlist.map((c) => parseCidr(c)!);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const path = request.url.split('?')[0] ?? '';
    if (!path.startsWith('/admin/') || path.endsWith('/openapi.json')) return true;
    if (!addressInCidrs(request.ip, this.allow)) throw new DomainError('Forbidden', 'The admin API is not reachable from this address.');
    const key = request.headers['x-api-key'];
    const authorization = request.headers.authorization;
    if (typeof key === 'string' && key) request.scope = await this.credentials.fromApiKey(key);
    else if (authorization?.startsWith('Bearer ')) request.scope = await this.credentials.fromBearer(authorization.slice(7).trim());
    else throw new DomainError('Unauthorized', 'An X-API-Key header or a Bearer token is required.');
    return true;
  }
}
