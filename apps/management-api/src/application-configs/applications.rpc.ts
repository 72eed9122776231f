import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RuntimeSubjects, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { ApplicationConfigsService } from './application-configs.service.js';

/**
 * `management-api.v1.applications.resolve`: the owner, config and shared secret of an application
 * id, for the services that verify client tokens and sign webhooks. NotFound for an unknown id.
 */
@Controller()
export class ApplicationsRpc {
  constructor(private readonly configs: ApplicationConfigsService) {}

  @MessagePattern(RuntimeSubjects.resolveApplication)
  resolve(
    @Payload() req: RequestOf<typeof RuntimeSubjects.resolveApplication>,
  ): Promise<ResponseOf<typeof RuntimeSubjects.resolveApplication>> {
    return this.configs.resolve(typeof req?.applicationId === 'string' ? req.applicationId : '');
  }
}
