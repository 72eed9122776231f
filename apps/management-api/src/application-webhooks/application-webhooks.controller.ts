import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApplicationWebhook,
  ApplicationWebhookCreateBody,
  ApplicationWebhookList,
  ApplicationWebhookUpdateBody,
} from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import {
  API_VERSION_DOC,
  LIST_QUERY_DOC,
  parseListQuery,
  parseSingleQuery,
  SINGLE_QUERY_DOC,
} from '../common/odata-query.js';
import { singleParam } from '../common/parent-param.js';
import { applicationWebhookModel } from './application-webhook.model.js';
import { ApplicationWebhooksService } from './application-webhooks.service.js';

const tags = ['Application webhooks'];

@Controller('ApplicationWebhooks')
export class ApplicationWebhooksController {
  constructor(private readonly webhooks: ApplicationWebhooksService) {}

  @Get()
  @ApiDoc({
    summary: 'List application webhooks',
    description:
      'With `applicationConfigId`, the webhooks of that application config (404 when the organization has no such config); without it, every application webhook of the organization.',
    tags,
    response: ApplicationWebhookList,
    errors: [404],
    query: [
      {
        name: 'applicationConfigId',
        description: 'The application config whose webhooks are listed.',
        schema: { type: 'string' },
      },
      ...LIST_QUERY_DOC,
    ],
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.webhooks.list(
      caller,
      parseListQuery(query, applicationWebhookModel),
      singleParam(query, 'applicationConfigId'),
    );
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create an application webhook',
    description:
      '`applicationConfigId` must name an application config of the organization (400 otherwise); `url` must be an http or https URL.',
    tags,
    body: ApplicationWebhookCreateBody,
    response: ApplicationWebhook,
    status: 201,
    query: API_VERSION_DOC,
  })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.webhooks.create(caller, readBody(ApplicationWebhookCreateBody, body));
  }

  @Get(':id')
  @ApiDoc({
    summary: 'Get an application webhook',
    tags,
    response: ApplicationWebhook,
    errors: [404],
    query: SINGLE_QUERY_DOC,
  })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.webhooks.get(caller, id, parseSingleQuery(query, applicationWebhookModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace an application webhook',
    description:
      'Absent fields take their defaults (`name`, `url`, `events` null; `disabled`, `batch`, `reliable` false); an absent `applicationConfigId` keeps the webhook where it is.',
    tags,
    body: ApplicationWebhookUpdateBody,
    response: ApplicationWebhook,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ApplicationWebhookUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update an application webhook',
    tags,
    body: ApplicationWebhookUpdateBody,
    response: ApplicationWebhook,
    errors: [404],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ApplicationWebhookUpdateBody, body), 'merge');
  }
}
