import { DomainError } from '@switchboard/contracts';

/** PostgreSQL unique violations of known constraints become 409 Conflict naming the field. */
export function conflictOnUnique<T>(
  constraints: Readonly<Record<string, { field: string; message: string }>>,
): (e: unknown) => T {
  return (e: unknown): T => {
    const err = e as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
    const code = err.driverError?.code ?? err.code;
    const constraint = err.driverError?.constraint ?? err.constraint;
    const known = constraint ? constraints[constraint] : undefined;
    if (code === '23505' && known)
      throw new DomainError('Conflict', known.message, [{ field: known.field, message: known.message }], known.field);
    throw e;
  };
}
