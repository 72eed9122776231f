import { Body, Controller, Get, Param, Patch, Put, Query } from '@nestjs/common';
import { Subscription, SubscriptionList, SubscriptionUpdateBody } from '@switchboard/contracts';
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
import { subscriptionModel } from './subscription.model.js';
import { SubscriptionsService } from './subscriptions.service.js';

const tags = ['Subscriptions'];

@Controller('Subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Get()
  @ApiDoc({
    summary: "List the organization's subscriptions",
    description: 'Subscriptions come with the billing account; there is no create operation.',
    tags,
    response: SubscriptionList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.subscriptions.list(caller, parseListQuery(query, subscriptionModel));
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get a subscription', tags, response: Subscription, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.subscriptions.get(caller, id, parseSingleQuery(query, subscriptionModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace a subscription (absent fields become null, plans empty)',
    tags,
    body: SubscriptionUpdateBody,
    response: Subscription,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.subscriptions.update(caller, id, readBody(SubscriptionUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update a subscription',
    tags,
    body: SubscriptionUpdateBody,
    response: Subscription,
    errors: [404],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.subscriptions.update(caller, id, readBody(SubscriptionUpdateBody, body), 'merge');
  }
}
