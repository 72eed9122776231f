import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ManagementReadSubjects, type ODataListResponse, type UsageRecord } from '@switchboard/contracts';
import { UsageQueryService } from './usage-query.service.js';

/** The interface B `Usage` list over NATS (libs/contracts/src/messaging/usage.ts), sent by management-api. */
@Controller()
export class UsageRpc {
  constructor(private readonly usage: UsageQueryService) {}

  @MessagePattern(ManagementReadSubjects.usageList)
  list(@Payload() request: unknown): Promise<ODataListResponse<Partial<UsageRecord>>> {
    return this.usage.list(request);
  }
}
