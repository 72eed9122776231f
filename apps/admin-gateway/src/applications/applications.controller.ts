import { Controller, Get, Param } from '@nestjs/common';
import { ApplicationSnapshot, Subjects, type CallerScope } from '@switchboard/contracts';
import { ApiDoc, NatsClient } from '@switchboard/service-kit';
import { Type } from '@sinclair/typebox';
import { requireOperator, Scope } from '../auth/scope.decorator.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';

const ApplicationIds = Type.Array(Type.String(), { $id: 'ApplicationIdList', description: 'Application ids in use' });

@Controller(ADMIN_PREFIXES.map((p) => `${p}/applications`))
export class ApplicationsController {
  constructor(private readonly nats: NatsClient) {}

  @Get()
  @ApiDoc({ summary: 'List application ids in use (operator credential)', tags: ['Applications'], response: ApplicationIds, errors: [403, 503, 504] })
  list(@Scope() scope: CallerScope) {
    requireOperator(scope);
    return this.nats.request(Subjects.applicationsList, { scope });
  }

  @Get(':applicationId')
  @ApiDoc({ summary: 'Snapshot of an application', tags: ['Applications'], response: ApplicationSnapshot, errors: [403, 404, 503, 504] })
  get(@Scope() scope: CallerScope, @Param('applicationId') applicationId: string) {
    return this.nats.request(Subjects.applicationGet, { scope, applicationId });
  }
}
