import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { CallerScope } from '@switchboard/contracts';

/** Who is calling interface B; every query is scoped to `organizationId`. */
export interface Caller {
  organizationId: string;
  /** Key id or user id, written to createdBy/modifiedBy and the change log. */
  principal: string;
  operator: boolean;
}

/**
 * The caller as the scope of a request to another service. Interface B is always scoped to the
 * caller's organization, so `operator` is false even for an operator key: an operator key reaches
 * across organizations on interface A, and on interface B only for the organizations themselves
 * (list, read, create, disable).
 */
export function toScope(caller: Caller): CallerScope {
  return { organizationId: caller.organizationId, operator: false, principal: caller.principal };
}

export const PUBLIC_ROUTE = 'switchboard:public';
/** Health, metrics and the OpenAPI document are readable without credentials. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  const caller = ctx.switchToHttp().getRequest<{ caller?: Caller }>().caller;
  if (!caller) throw new Error('CurrentCaller used on a route without authentication');
  return caller;
});
