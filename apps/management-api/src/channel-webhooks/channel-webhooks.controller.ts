import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ChannelWebhook,
  ChannelWebhookCreateBody,
  ChannelWebhookList,
  ChannelWebhookUpdateBody,
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
import { channelWebhookModel } from './channel-webhook.model.js';
import { ChannelWebhooksService } from './channel-webhooks.service.js';

const tags = ['Channel webhooks'];

@Controller('ChannelWebhooks')
export class ChannelWebhooksController {
  constructor(private readonly webhooks: ChannelWebhooksService) {}

  @Get()
  @ApiDoc({
    summary: 'List channel webhooks',
    description:
      'With `channelConfigId`, the webhooks of that channel config (404 when the organization has no such config); without it, every channel webhook of the organization.',
    tags,
    response: ChannelWebhookList,
    errors: [404],
    query: [
      {
        name: 'channelConfigId',
        description: 'The channel config whose webhooks are listed.',
        schema: { type: 'string' },
      },
      ...LIST_QUERY_DOC,
    ],
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.webhooks.list(
      caller,
      parseListQuery(query, channelWebhookModel),
      singleParam(query, 'channelConfigId'),
    );
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create a channel webhook',
    description:
      '`channelConfigId` must name a channel config of the organization (400 otherwise); `url` must be an http or https URL.',
    tags,
    body: ChannelWebhookCreateBody,
    response: ChannelWebhook,
    status: 201,
    query: API_VERSION_DOC,
  })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.webhooks.create(caller, readBody(ChannelWebhookCreateBody, body));
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get a channel webhook', tags, response: ChannelWebhook, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.webhooks.get(caller, id, parseSingleQuery(query, channelWebhookModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace a channel webhook',
    description:
      'Absent fields take their defaults (`name`, `url`, `events` null; `disabled`, `batch`, `reliable` false); an absent `channelConfigId` keeps the webhook where it is.',
    tags,
    body: ChannelWebhookUpdateBody,
    response: ChannelWebhook,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ChannelWebhookUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update a channel webhook',
    tags,
    body: ChannelWebhookUpdateBody,
    response: ChannelWebhook,
    errors: [404],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(caller, id, readBody(ChannelWebhookUpdateBody, body), 'merge');
  }
}
