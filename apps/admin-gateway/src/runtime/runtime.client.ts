import { Inject, Injectable } from '@nestjs/common';
import {
  OPERATOR_QUERIES,
  RuntimeSubjects,
  type CallerScope,
  type KickTarget,
  type MessageBody,
  type MessageTarget,
  type RuntimeCommand,
  type RuntimeQueries,
  type RuntimeQuery,
  type RuntimeQueryKind,
  type UpdateTarget,
} from '@switchboard/contracts';
import { NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { requireOperator } from '../auth/scope.decorator.js';
import type { GatewayConfig } from '../config.js';

/**
 * Interface A's face of runtime-registry: a read is one `query`, a write one `command`, both with the
 * caller's scope. A read answers the registry's JSON text as is, shared within a turn (README: memory).
 */
@Injectable()
export class RuntimeClient {
  private readonly share: { shareWithinTurn: boolean };

  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) config: GatewayConfig,
  ) {
    this.share = { shareWithinTurn: config.adminShareReads };
  }

  async query<K extends RuntimeQueryKind>(
    scope: CallerScope,
    kind: K,
    params: RuntimeQueries[K]['params'],
  ): Promise<Buffer> {
    if ((OPERATOR_QUERIES as readonly string[]).includes(kind)) requireOperator(scope);
    const query = { kind, ...params } as RuntimeQuery;
    return this.nats.requestJson(RuntimeSubjects.query, { scope, query }, this.share);
  }

  async command(scope: CallerScope, command: RuntimeCommand): Promise<void> {
    if (command.kind === 'mediaserver.update') requireOperator(scope);
    await this.nats.request(RuntimeSubjects.command, { scope, command });
  }

  /** The three commands of interface A's level routes, issued on behalf of the API. */
  async update(scope: CallerScope, target: UpdateTarget): Promise<void> {
    await this.command(scope, { kind: 'update', origin: 'api', target });
  }

  async kick(scope: CallerScope, target: KickTarget): Promise<void> {
    await this.command(scope, { kind: 'kick', origin: 'api', target });
  }

  async message(scope: CallerScope, target: MessageTarget, message: MessageBody): Promise<void> {
    await this.command(scope, { kind: 'message', origin: 'api', target, message });
  }
}
