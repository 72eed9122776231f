import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DomainError } from '@switchboard/contracts';

export const SUPPORTED_API_VERSIONS = ['1.0'];

/** `api-version` is optional; `1.0` is the only supported value. */
@Injectable()
export class ApiVersionGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const query = context.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query ?? {};
    const v = query['api-version'];
    if (v === undefined) return true;
    if (typeof v === 'string' && SUPPORTED_API_VERSIONS.includes(v)) return true;
    throw new DomainError(
      'ValidationFailed',
      `api-version '${String(v)}' is not supported; supported: ${SUPPORTED_API_VERSIONS.join(', ')}.`,
      [],
      'api-version',
    );
  }
}
