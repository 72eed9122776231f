import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@switchboard/contracts';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { PUBLIC_ROUTE, type Caller } from './caller.js';

const OPEN_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Every interface B route needs an `X-API-Key`; the key's organization scopes everything after. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<{ url: string; headers: Record<string, string | string[] | undefined>; caller?: Caller }>();
    if (OPEN_PATHS.has(request.url.split('?')[0] ?? '')) return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()])) return true;
    const header = request.headers['x-api-key'];
    const value = Array.isArray(header) ? header[0] : header;
    if (!value) throw new DomainError('Unauthorized', 'An X-API-Key header is required.');
    const key = await this.keys.verify(value);
    if (!key) throw new DomainError('Unauthorized', 'The API key is not valid.');
    request.caller = { organizationId: key.organizationId, principal: key.keyId, operator: key.operator };
    return true;
  }
}
