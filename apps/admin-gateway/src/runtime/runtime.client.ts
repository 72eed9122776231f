import { Inject, Injectable } from '@nestjs/common';
import {
  OPERATOR_QUERIES,
  RuntimeSubjects,
  type CallerScope,
  type RuntimeCommand,
  type RuntimeQueries,
  type RuntimeQuery,
  type RuntimeQueryKind,
} from '@switchboard/contracts';
import { NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { requireOperator } from '../auth/scope.decorator.js';
import type { GatewayConfig } from '../config.js';

/**
 * The gateway's face of runtime-registry: every interface A read is one `runtime-registry.v1.query`
 * with a `kind`, every update, kick and message one `runtime-registry.v1.command`. Both carry the
 * caller's scope; the registry answers another organization's entities as NotFound.
 *
 * A read resolves with the registry's answer as JSON text (the registry validated and serialized
 * it, `RuntimeQueryResult<K>` of the contract): the HTTP body as is, never parsed and re-serialized
 * here. Routes that answer it are declared with `@GetJson` (see http/routes.ts). Identical reads
 * of one event-loop turn (same caller scope, same query) share one request (`shareWithinTurn`,
 * unless ADMIN_SHARE_READS is false): dashboards polling the same snapshot cost the registry one
 * read per turn, not one per poll.
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
}
