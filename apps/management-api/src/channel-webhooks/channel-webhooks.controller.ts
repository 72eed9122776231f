import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ChannelWebhook,
  ChannelWebhookCreateBody,
  ChannelWebhookList,
  ChannelWebhookUpdateBody,
} from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { webhookDeleteDoc, webhookSendTestDoc } from '../common/webhook-docs.js';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { LIST_QUERY_DOC, parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { singleParam } from '../common/parent-param.js';
import { channelWebhookModel } from './channel-webhook.model.js';
import { ChannelWebhooksService } from './channel-webhooks.service.js';

const docs = entitySetDocs('Channel webhooks');

@Controller('ChannelWebhooks')
export class ChannelWebhooksController {
  constructor(private readonly webhooks: ChannelWebhooksService) {}

  @Get()
  @ApiDoc(
    docs.list('List channel webhooks', ChannelWebhookList, {
      description:
        'With `channelConfigId`, the webhooks of that channel config (404 when the organization has no such config); without it, every channel webhook of the organization.',
      errors: [404],
      query: [
        {
          name: 'channelConfigId',
          description: 'The channel config whose webhooks are listed.',
          schema: { type: 'string' },
        },
        ...LIST_QUERY_DOC,
      ],
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.webhooks.list(
      caller,
      parseListQuery(query, channelWebhookModel),
      singleParam(query, 'channelConfigId'),
    );
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(
    docs.create('Create a channel webhook', ChannelWebhookCreateBody, ChannelWebhook, {
      description:
        '`channelConfigId` must name a channel config of the organization (400 otherwise); `url` must be an http or https URL.',
    }),
  )
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.webhooks.create(caller, readBody(ChannelWebhookCreateBody, body));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get a channel webhook', ChannelWebhook))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.webhooks.get(caller, id, parseSingleQuery(query, channelWebhookModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update('Replace a channel webhook', ChannelWebhookUpdateBody, ChannelWebhook, {
      description:
        'Absent fields take their defaults (`name`, `url`, `events` null; `disabled`, `batch`, `reliable` false); an absent `channelConfigId` keeps the webhook where it is.',
    }),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ChannelWebhookUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(docs.update('Partially update a channel webhook', ChannelWebhookUpdateBody, ChannelWebhook))
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ChannelWebhookUpdateBody, body), 'merge');
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiDoc(webhookDeleteDoc('a channel webhook', docs.tags))
  remove(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<void> {
    return this.webhooks.remove(caller, id);
  }

  @Post(':id/SendTest')
  @HttpCode(202)
  @ApiDoc(webhookSendTestDoc('a channel webhook', docs.tags))
  sendTest(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.webhooks.sendTest(caller, id);
  }
}
