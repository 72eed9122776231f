import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { WebhookMessagingValidators, WebhookSubjects, type WebhooksResolveResponse } from '@switchboard/contracts';
import { WebhooksResolverService } from './webhooks-resolver.service.js';

/** `management-api.v1.webhooks.resolve`, asked by webhook-worker for every event it delivers. */
@Controller()
export class WebhooksRpc {
  constructor(private readonly resolver: WebhooksResolverService) {}

  @MessagePattern(WebhookSubjects.resolve)
  resolve(@Payload() body: unknown): Promise<WebhooksResolveResponse> {
    return this.resolver.resolve(WebhookMessagingValidators.WebhooksResolveRequest.parse(body));
  }
}
