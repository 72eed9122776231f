import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApplicationWebhook,
  ApplicationWebhookCreateBody,
  ApplicationWebhookList,
  ApplicationWebhookUpdateBody,
} from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { webhookDeleteDoc, webhookSendTestDoc } from '../common/webhook-docs.js';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { LIST_QUERY_DOC, parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { singleParam } from '../common/parent-param.js';
import { applicationWebhookModel } from './application-webhook.model.js';
import { ApplicationWebhooksService } from './application-webhooks.service.js';

const docs = entitySetDocs('Application webhooks');

@Controller('ApplicationWebhooks')
export class ApplicationWebhooksController {
  constructor(private readonly webhooks: ApplicationWebhooksService) {}

  @Get()
  @ApiDoc(
    docs.list('List application webhooks', ApplicationWebhookList, {
      description:
        'With `applicationConfigId`, the webhooks of that application config (404 when the organization has no such config); without it, every application webhook of the organization.',
      errors: [404],
      query: [
        {
          name: 'applicationConfigId',
          description: 'The application config whose webhooks are listed.',
          schema: { type: 'string' },
        },
        ...LIST_QUERY_DOC,
      ],
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.webhooks.list(
      caller,
      parseListQuery(query, applicationWebhookModel),
      singleParam(query, 'applicationConfigId'),
    );
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(
    docs.create('Create an application webhook', ApplicationWebhookCreateBody, ApplicationWebhook, {
      description:
        '`applicationConfigId` must name an application config of the organization (400 otherwise); `url` must be an http or https URL.',
    }),
  )
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.webhooks.create(caller, readBody(ApplicationWebhookCreateBody, body));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get an application webhook', ApplicationWebhook))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.webhooks.get(caller, id, parseSingleQuery(query, applicationWebhookModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update('Replace an application webhook', ApplicationWebhookUpdateBody, ApplicationWebhook, {
      description:
        'Absent fields take their defaults (`name`, `url`, `events` null; `disabled`, `batch`, `reliable` false); an absent `applicationConfigId` keeps the webhook where it is.',
    }),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ApplicationWebhookUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(docs.update('Partially update an application webhook', ApplicationWebhookUpdateBody, ApplicationWebhook))
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ApplicationWebhookUpdateBody, body), 'merge');
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiDoc(webhookDeleteDoc('an application webhook', docs.tags))
  remove(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<void> {
    return this.webhooks.remove(caller, id);
  }

  @Post(':id/SendTest')
  @HttpCode(202)
  @ApiDoc(webhookSendTestDoc('an application webhook', docs.tags))
  sendTest(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.webhooks.sendTest(caller, id);
  }
}
