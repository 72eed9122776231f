import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Subjects, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { ApiKeysService } from './api-keys.service.js';

/** Lets the admin gateway authenticate interface A callers with interface B keys. */
@Controller()
export class ApiKeysRpc {
  constructor(private readonly keys: ApiKeysService) {}

  @MessagePattern(Subjects.apiKeyVerify)
  async verify(
    @Payload() req: RequestOf<typeof Subjects.apiKeyVerify>,
  ): Promise<ResponseOf<typeof Subjects.apiKeyVerify>> {
    const key = typeof req?.apiKey === 'string' ? await this.keys.verify(req.apiKey) : null;
    if (!key) return { valid: false };
    if (key.organizationDisabled)
      return { valid: false, organizationDisabled: true, organizationId: key.organizationId };
    return { valid: true, keyId: key.keyId, organizationId: key.organizationId, operator: key.operator };
  }
}
