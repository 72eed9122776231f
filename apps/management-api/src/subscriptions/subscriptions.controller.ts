import { Body, Controller, Get, Param, Patch, Put, Query } from '@nestjs/common';
import { Subscription, SubscriptionList, SubscriptionUpdateBody } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { subscriptionModel } from './subscription.model.js';
import { SubscriptionsService } from './subscriptions.service.js';

const docs = entitySetDocs('Subscriptions');

@Controller('Subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Get()
  @ApiDoc(
    docs.list("List the organization's subscriptions", SubscriptionList, {
      description: 'Subscriptions come with the billing account; there is no create operation.',
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.subscriptions.list(caller, parseListQuery(query, subscriptionModel));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get a subscription', Subscription))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.subscriptions.get(caller, id, parseSingleQuery(query, subscriptionModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update(
      'Replace a subscription (absent fields become null, plans empty)',
      SubscriptionUpdateBody,
      Subscription,
    ),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.subscriptions.update(caller, id, readBody(SubscriptionUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(docs.update('Partially update a subscription', SubscriptionUpdateBody, Subscription))
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.subscriptions.update(caller, id, readBody(SubscriptionUpdateBody, body), 'merge');
  }
}
