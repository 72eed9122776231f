import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DomainError } from '@switchboard/contracts';

export const SUPPORTED_API_VERSIONS = ['1.0'];

/** `api-version` is optional; `1.0` is the only supported value. */
@Injectable()
export class ApiVersionGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const query = context.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query ?? {};
    const requested = query['api-version'];
    if (requested === undefined) return true;
    if (typeof requested === 'string' && SUPPORTED_API_VERSIONS.includes(requested)) return true;
    const shown =
      Array.isArray(requested) || typeof requested === 'string' ? String(requested) : JSON.stringify(requested);
    throw new DomainError(
      'ValidationFailed',
      `api-version '${shown}' is not supported; supported: ${SUPPORTED_API_VERSIONS.join(', ')}.`,
      [],
      'api-version',
    );
  }
}
