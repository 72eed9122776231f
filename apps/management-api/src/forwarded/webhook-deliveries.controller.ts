import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { WebhookDelivery, WebhookDeliveryReplayResult, WebhookSubjects, listOf } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { API_VERSION_DOC } from '../common/odata-query.js';
import {
  FORWARDED_LIST_QUERY_DOC,
  FORWARDED_SINGLE_QUERY_DOC,
  forwardedNamesDoc,
  ForwardedReadsService,
  listEnvelope,
  uuidParam,
} from './forwarded-reads.service.js';

const tags = ['Webhook deliveries'];
const WebhookDeliveryList = listOf(WebhookDelivery);
const SERVED =
  'Answered by webhook-worker (`webhook-worker.v1.deliveries.*`); 503 when it is down, 504 when it is slow.';
const NAMES = forwardedNamesDoc('delivery attempt');

/**
 * The webhook delivery log (`/WebhookDeliveries`, messaging/webhooks.ts): one entity per attempt,
 * the organization's only. An extension of interface B beyond http-contract.md.
 */
@Controller('WebhookDeliveries')
export class WebhookDeliveriesController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get()
  @ApiDoc({
    summary: "List the organization's webhook delivery attempts",
    description: `One record per attempt (retries share \`deliveryId\`); newest first without \`$orderby\`. ${SERVED}${NAMES}`,
    tags,
    response: WebhookDeliveryList,
    errors: [503, 504],
    query: FORWARDED_LIST_QUERY_DOC,
  })
  async list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    const options = this.reads.listOptions(query, 'WebhookDeliveries');
    return listEnvelope(
      await this.reads.request(WebhookSubjects.deliveriesList, { scope: this.reads.scope(caller), query: options }),
    );
  }

  @Get(':id')
  @ApiDoc({
    summary: 'Get one webhook delivery attempt',
    description: SERVED + NAMES,
    tags,
    response: WebhookDelivery,
    errors: [404, 503, 504],
    query: FORWARDED_SINGLE_QUERY_DOC,
  })
  async get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    const attempt = uuidParam(id, 'webhook delivery');
    const options = this.reads.singleQueryOptions(query, 'a webhook delivery read');
    return this.reads.request(WebhookSubjects.deliveriesGet, {
      scope: this.reads.scope(caller),
      id: attempt,
      query: options,
    });
  }

  @Post(':id/Replay')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Replay a failed webhook delivery',
    description: `Queues a new delivery (new \`webhook-id\`) of the same events to the webhook's current URL; 409 unless the delivery failed for good. ${SERVED}`,
    tags,
    response: WebhookDeliveryReplayResult,
    status: 202,
    errors: [404, 409, 503, 504],
    query: API_VERSION_DOC,
  })
  async replay(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    const attempt = uuidParam(id, 'webhook delivery');
    return this.reads.request(WebhookSubjects.deliveriesReplay, { scope: this.reads.scope(caller), id: attempt });
  }
}
