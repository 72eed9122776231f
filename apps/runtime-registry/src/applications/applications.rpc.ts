import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ApplicationGetRequest, ApplicationRegisterRequest, ApplicationsListRequest, Subjects, validator, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { ApplicationsStore } from './applications.store.js';

const listRequest = validator(ApplicationsListRequest);
const getRequest = validator(ApplicationGetRequest);
const registerRequest = validator(ApplicationRegisterRequest);

@Controller()
export class ApplicationsRpc {
  constructor(private readonly store: ApplicationsStore) {}

  @MessagePattern(Subjects.applicationsList)
  list(@Payload() req: unknown): Promise<ResponseOf<typeof Subjects.applicationsList>> {
    return this.store.list(listRequest.parse(req).scope);
  }

  @MessagePattern(Subjects.applicationGet)
  get(@Payload() req: unknown): Promise<ResponseOf<typeof Subjects.applicationGet>> {
    const r: RequestOf<typeof Subjects.applicationGet> = getRequest.parse(req);
    return this.store.snapshot(r.scope, r.applicationId);
  }

  @MessagePattern(Subjects.applicationRegister)
  async register(@Payload() req: unknown): Promise<ResponseOf<typeof Subjects.applicationRegister>> {
    const r = registerRequest.parse(req);
    await this.store.register(r.applicationId, r.organizationId);
    return r;
  }
}
