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
import { APPLICATION_PATH, LIST_ERRORS, READ_ERRORS, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Applications'];

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
  @ApiDoc({ summary: 'Snapshot of an application', tags, response: ApplicationSnapshot, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'application.get', ids);
  }

  @Post(`${APPLICATION_PATH}/message`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Send a server message to every client of an application',
    tags,
    body: MessageBody,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async message(@Scope() scope: CallerScope, @Ids() ids: AppRef, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, {
      kind: 'message',
      origin: 'api',
      target: { level: 'application', ...ids },
      message,
    });
  }

  @GetJson(`${APPLICATION_PATH}/environment`)
  @ApiDoc({
    summary: 'Environment of an application: gateways, media servers, connectors and recording services',
    description:
      'Published under `/admin/api/v1` (the path of the specification) and, like every operation, under `/admin/api/v1.0`.',
    tags,
    response: ApplicationEnvironment,
    errors: READ_ERRORS,
  })
  environment(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'application.environment', ids);
  }
}
