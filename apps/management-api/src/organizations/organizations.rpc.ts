import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Subjects, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { KnownOrganizations } from '../auth/known-organizations.js';

/** Lets the admin gateway refuse Bearer tokens of a disabled organization (it checks the tokens themselves locally). */
@Controller()
export class OrganizationsRpc {
  constructor(private readonly organizations: KnownOrganizations) {}

  @MessagePattern(Subjects.organizationStatus)
  async status(
    @Payload() req: RequestOf<typeof Subjects.organizationStatus>,
  ): Promise<ResponseOf<typeof Subjects.organizationStatus>> {
    const organization =
      typeof req?.organizationId === 'string' ? await this.organizations.resolve(req.organizationId) : null;
    return { disabled: organization?.disabled === true };
  }
}
