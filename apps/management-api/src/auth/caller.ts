import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';

/** Who is calling interface B; every query is scoped to `organizationId`. */
export interface Caller {
  organizationId: string;
  /** Key id or user id, written to createdBy/modifiedBy and the change log. */
  principal: string;
  operator: boolean;
}

export const PUBLIC_ROUTE = 'switchboard:public';
/** Health, metrics and the OpenAPI document are readable without credentials. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  const caller = ctx.switchToHttp().getRequest<{ caller?: Caller }>().caller;
  if (!caller) throw new Error('CurrentCaller used on a route without authentication');
  return caller;
});
