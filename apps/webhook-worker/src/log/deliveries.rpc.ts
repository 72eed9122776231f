import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { WebhookMessagingValidators, WebhookSubjects, type ResponseOf } from '@switchboard/contracts';
import { DeliveriesService } from './deliveries.service.js';

/** The `/WebhookDeliveries` entity set over NATS (management-api forwards interface B calls here). */
@Controller()
export class DeliveriesRpc {
  constructor(private readonly deliveries: DeliveriesService) {}

  @MessagePattern(WebhookSubjects.deliveriesList)
  list(@Payload() req: unknown): Promise<ResponseOf<typeof WebhookSubjects.deliveriesList>> {
    const r = WebhookMessagingValidators.WebhookDeliveriesListRequest.parse(req);
    return this.deliveries.list(r.scope, r.query);
  }

  @MessagePattern(WebhookSubjects.deliveriesGet)
  get(@Payload() req: unknown): Promise<ResponseOf<typeof WebhookSubjects.deliveriesGet>> {
    const r = WebhookMessagingValidators.WebhookDeliveryGetRequest.parse(req);
    return this.deliveries.get(r.scope, r.id, r.query);
  }

  @MessagePattern(WebhookSubjects.deliveriesReplay)
  replay(@Payload() req: unknown): Promise<ResponseOf<typeof WebhookSubjects.deliveriesReplay>> {
    const r = WebhookMessagingValidators.WebhookDeliveryReplayRequest.parse(req);
    return this.deliveries.replay(r.scope, r.id);
  }
}
