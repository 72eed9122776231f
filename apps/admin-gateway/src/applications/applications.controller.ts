import { Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApplicationEnvironment,
  ApplicationSnapshot,
  MessageBody,
  type CallerScope,
  type AppRef,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ApplicationIdList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { APPLICATION_PATH, LIST_ERRORS, GetJson, routeDocs } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Applications'];
const doc = routeDocs('Applications');

@Controller([...ADMIN_PREFIXES])
export class ApplicationsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson('applications')
  @ApiDoc({
    summary: 'List application ids in use',
    description:
      "An organization's credential lists its own applications; an operator credential lists every organization's.",
    tags,
    response: ApplicationIdList,
    errors: LIST_ERRORS,
  })
  list(@Scope() scope: CallerScope) {
    return this.runtime.query(scope, 'applications.list', {});
  }

  @GetJson(APPLICATION_PATH)
  @ApiDoc(doc.read('Snapshot of an application', ApplicationSnapshot))
  get(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'application.get', ids);
  }

  @Post(`${APPLICATION_PATH}/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to every client of an application'))
  message(@Scope() scope: CallerScope, @Ids() ids: AppRef, @ValidBody(MessageBody) message: MessageBody) {
    return this.runtime.message(scope, { level: 'application', ...ids }, message);
  }

  @GetJson(`${APPLICATION_PATH}/environment`)
  @ApiDoc(
    doc.read(
      'Environment of an application: gateways, media servers, connectors and recording services',
      ApplicationEnvironment,
      'Published under `/admin/api/v1` (the path of the specification) and, like every operation, under `/admin/api/v1.0`.',
    ),
  )
  environment(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'application.environment', ids);
  }
}
