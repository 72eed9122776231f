import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ManagementReadSubjects, UsageSubjects, type ODataListResponse, type UsageQueryResponse, type UsageRecord } from '@switchboard/contracts';
import { UsageQueryService } from './usage-query.service.js';

/**
 * The interface B `Usage` list over NATS. Two envelopes of one query: `usage.query` (this
 * service's contract, libs/contracts/src/messaging/usage.ts) and `usage.list` (the one
 * management-api sends, libs/contracts/src/interface-b/management-messaging.ts).
 */
@Controller()
export class UsageRpc {
  constructor(private readonly usage: UsageQueryService) {}

  @MessagePattern(UsageSubjects.query)
  query(@Payload() request: unknown): Promise<UsageQueryResponse> {
    return this.usage.query(request);
  }

  @MessagePattern(ManagementReadSubjects.usageList)
  list(@Payload() request: unknown): Promise<ODataListResponse<Partial<UsageRecord>>> {
    return this.usage.listForManagement(request);
  }
}
