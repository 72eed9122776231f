import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { DomainError, type CallerScope } from '@switchboard/contracts';
import type { AuthenticatedRequest } from './admin-auth.guard.js';

export const Scope = createParamDecorator((_: unknown, ctx: ExecutionContext): CallerScope => {
  const scope = ctx.switchToHttp().getRequest<AuthenticatedRequest>().scope;
  if (!scope) throw new DomainError('Unauthorized', 'Authentication is required.');
  return scope;
});

/** Operations on the shared infrastructure (media servers, connectors, diagnostics) need an operator credential. */
export function requireOperator(scope: CallerScope): void {
  if (!scope.operator) throw new DomainError('Forbidden', 'This operation needs an operator credential.');
}
