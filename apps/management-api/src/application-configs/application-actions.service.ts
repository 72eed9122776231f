import { Inject, Injectable } from '@nestjs/common';
import {
  ActionPayloads,
  ClaimsPayload,
  DomainError,
  RuntimeSubjects,
  validator,
  type ActionPayload,
} from '@switchboard/contracts';
import { NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { toScope, type Caller } from '../auth/caller.js';
import { bodyObject } from '../common/bodies.js';
import type { ManagementConfig } from '../config.js';
import { ApplicationConfigsService } from './application-configs.service.js';
import { issueClientToken } from './client-token.js';
import { toRuntimeCommand, type RuntimeActionName } from './runtime-commands.js';

function payloadOf<A extends RuntimeActionName>(action: A, body: unknown): ActionPayload<A> {
  return validator(ActionPayloads[action], `${action}Payload`).parse(bodyObject(body)) as ActionPayload<A>;
}

/**
 * `POST /ApplicationConfigs/{id}/<Action>`: `Token` is answered here (signed with the
 * application's shared secret); every other action is validated and forwarded to the runtime
 * registry as a RuntimeCommand with the caller's scope, whose answer (or error) is the action's.
 */
@Injectable()
export class ApplicationActionsService {
  constructor(
    private readonly configs: ApplicationConfigsService,
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: ManagementConfig,
  ) {}

  async token(caller: Caller, id: string, body: unknown): Promise<{ value: string }> {
    const claims = validator(ClaimsPayload).parse(bodyObject(body));
    const app = await this.configs.find(caller, id);
    if (app.disabled === true)
      throw new DomainError(
        'Conflict',
        `Application '${String(app.applicationId)}' is disabled; no client token is issued for it.`,
      );
    return {
      value: issueClientToken({
        applicationId: app.applicationId as string,
        sharedSecret: app.sharedSecret as string,
        claims,
        now: Date.now(),
        ttlSeconds: this.config.clientTokenTtlSeconds,
      }),
    };
  }

  async run<A extends RuntimeActionName>(caller: Caller, id: string, action: A, body: unknown): Promise<void> {
    const payload = payloadOf(action, body);
    const app = await this.configs.find(caller, id);
    const command = toRuntimeCommand(action, app.applicationId as string, payload);
    await this.nats.request(RuntimeSubjects.command, { scope: toScope(caller), command });
  }
}
