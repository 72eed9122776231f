import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@switchboard/contracts';
import { bearerToken, BearerVerifier, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { ManagementConfig } from '../config.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { PUBLIC_ROUTE, type Caller } from './caller.js';
import { KnownOrganizations } from './known-organizations.js';

const OPEN_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Every interface B route needs an `X-API-Key`, or `Authorization: Bearer <JWT>` for user accounts
 * (when OAUTH_* is configured); the credential's organization scopes everything after. A token's
 * organization claim is the issuer's word, not ours: it must name an organization of this
 * deployment (403 otherwise, like a token naming none), so nothing after sees an id that is not one.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly bearer: BearerVerifier;

  constructor(
    private readonly keys: ApiKeysService,
    private readonly reflector: Reflector,
    private readonly organizations: KnownOrganizations,
    @Inject(SERVICE_CONFIG) config: ManagementConfig,
  ) {
    this.bearer = new BearerVerifier(config);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context
      .switchToHttp()
      .getRequest<{ url: string; headers: Record<string, string | string[] | undefined>; caller?: Caller }>();
    if (OPEN_PATHS.has(request.url.split('?')[0] ?? '')) return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()]))
      return true;
    const header = request.headers['x-api-key'];
    const value = Array.isArray(header) ? header[0] : header;
    const token = bearerToken(request.headers.authorization);
    if (!value && token !== undefined) {
      const scope = await this.bearer.verify(token);
      // Interface B records all belong to an organization: a token must name one.
      if (!scope.organizationId) throw new DomainError('Forbidden', 'The token names no organization.');
      const organization = await this.organizations.resolve(scope.organizationId);
      if (!organization)
        throw new DomainError('Forbidden', 'The token names an organization this service does not know.');
      if (organization.disabled) throw new DomainError('Forbidden', 'The organization of this token is disabled.');
      request.caller = { organizationId: organization.id, principal: scope.principal, operator: false };
      return true;
    }
    if (!value) throw new DomainError('Unauthorized', 'An X-API-Key header or a Bearer token is required.');
    const key = await this.keys.verify(value);
    if (!key) throw new DomainError('Unauthorized', 'The API key is not valid.');
    if (key.organizationDisabled) throw new DomainError('Forbidden', 'The organization of this API key is disabled.');
    request.caller = { organizationId: key.organizationId, principal: key.keyId, operator: key.operator };
    return true;
  }
}
