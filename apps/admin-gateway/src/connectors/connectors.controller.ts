import { Controller } from '@nestjs/common';
import type { CallerScope } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { OperatorOnly } from '../auth/operator.guard.js';
import { Scope } from '../auth/scope.decorator.js';
import { ConnectorList } from '../http/doc-schemas.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { OPERATOR_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Connectors'];

/** The specification has two operations that both list every registered connector; both answer the same list. */
@OperatorOnly()
@Controller([...ADMIN_PREFIXES])
export class ConnectorsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson('connectors')
  @ApiDoc({
    summary: 'List all registered connectors (operator credential)',
    tags,
    response: ConnectorList,
    errors: OPERATOR_ERRORS,
  })
  list(@Scope() scope: CallerScope) {
    return this.runtime.query(scope, 'connectors.list', {});
  }

  @GetJson('sipconnectors')
  @ApiDoc({
    summary: 'List all registered connectors (operator credential; same list as /connectors)',
    tags,
    response: ConnectorList,
    errors: OPERATOR_ERRORS,
  })
  listSip(@Scope() scope: CallerScope) {
    return this.runtime.query(scope, 'connectors.list', {});
  }
}
