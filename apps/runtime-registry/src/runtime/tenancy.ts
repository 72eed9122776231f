import { DomainError, type CallerScope } from '@switchboard/contracts';
import type { EventOwner } from '../model/events.js';

/** An application's owner and whether it is in use, as the store holds them. */
export interface ApplicationOwnership {
  organizationId: string | null;
  inUse: boolean;
}

/**
 * Tenancy: the application must be in use, and belong to the caller's organization unless the
 * caller is an operator. Another organization's application answers exactly like a missing one.
 */
export function checkOwner(scope: CallerScope, applicationId: string, owner: ApplicationOwnership): EventOwner {
  if (
    !owner.inUse ||
    owner.organizationId === null ||
    (!scope.operator && owner.organizationId !== scope.organizationId)
  ) {
    throw new DomainError('NotFound', `No application '${applicationId}' is in use.`);
  }
  return { applicationId, organizationId: owner.organizationId };
}

export function requireOperator(scope: CallerScope): void {
  if (!scope.operator) throw new DomainError('Forbidden', 'This operation needs an operator credential.');
}
