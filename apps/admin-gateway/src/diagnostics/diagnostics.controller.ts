import { Controller, Query } from '@nestjs/common';
import { DomainError, type CallerScope } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { OperatorOnly } from '../auth/operator.guard.js';
import { Scope } from '../auth/scope.decorator.js';
import { DatastorePage } from '../http/doc-schemas.js';
import { optionalInt } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { OPERATOR_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

export const DATASTORE_PAGE_MAX = 1000;
const CURSOR = /^[\x21-\x7e]{1,256}$/;

@OperatorOnly()
@Controller(ADMIN_PREFIXES.map((p) => `${p}/diagnostics`))
export class DiagnosticsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson('datastore')
  @ApiDoc({
    summary: 'Dump the raw runtime datastore, one page at a time (operator credential)',
    description:
      'Keys and values of the live model (secrets never included). Start without `cursor`; pass the `next` of each page as `cursor` until it is null.',
    tags: ['Diagnostics'],
    response: DatastorePage,
    errors: OPERATOR_ERRORS,
    query: [
      { name: 'cursor', description: 'The `next` of the previous page.', schema: { type: 'string', maxLength: 256 } },
      {
        name: 'count',
        description: `Entries per page (1 to ${DATASTORE_PAGE_MAX}, default 100).`,
        schema: { type: 'integer', minimum: 1, maximum: DATASTORE_PAGE_MAX, default: 100 },
      },
    ],
  })
  datastore(@Scope() scope: CallerScope, @Query('cursor') cursor: unknown, @Query('count') count: unknown) {
    if (cursor !== undefined && (typeof cursor !== 'string' || !CURSOR.test(cursor))) {
      throw new DomainError('ValidationFailed', 'The query parameter cursor is invalid.', [
        { field: 'cursor', message: 'must be the next cursor of a previous page' },
      ]);
    }
    const size = optionalInt('count', count, 1, DATASTORE_PAGE_MAX) ?? 100;
    return this.runtime.query(scope, 'diagnostics.datastore', { ...(cursor ? { cursor } : {}), count: size });
  }
}
