import { Injectable, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DomainError } from '@switchboard/contracts';
import type { AuthenticatedRequest } from './admin-auth.guard.js';
import { requireOperator } from './scope.decorator.js';

/**
 * Operations on the shared infrastructure (media servers, connectors, diagnostics) need
 * an operator credential: 403 before anything else about the request is looked at. Runs after the
 * global AdminAuthGuard, which established the scope.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const scope = context.switchToHttp().getRequest<AuthenticatedRequest>().scope;
    if (!scope) throw new DomainError('Unauthorized', 'Authentication is required.');
    requireOperator(scope);
    return true;
  }
}

export const OperatorOnly = () => UseGuards(OperatorGuard);
