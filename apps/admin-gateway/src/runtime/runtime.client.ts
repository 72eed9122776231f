import { Injectable } from '@nestjs/common';
import {
  OPERATOR_QUERIES,
  RuntimeSubjects,
  type CallerScope,
  type RuntimeCommand,
  type RuntimeQueries,
  type RuntimeQuery,
  type RuntimeQueryKind,
  type RuntimeQueryResult,
} from '@switchboard/contracts';
import { NatsClient } from '@switchboard/service-kit';
import { requireOperator } from '../auth/scope.decorator.js';

/**
 * The gateway's face of runtime-registry: every interface A read is one `runtime-registry.v1.query`
 * with a `kind`, every update, kick and message one `runtime-registry.v1.command`. Both carry the
 * caller's scope; the registry answers another organization's entities as NotFound.
 */
@Injectable()
export class RuntimeClient {
  constructor(private readonly nats: NatsClient) {}

  query<K extends RuntimeQueryKind>(scope: CallerScope, kind: K, params: RuntimeQueries[K]['params']): Promise<RuntimeQueryResult<K>> {
    try {
      if ((OPERATOR_QUERIES as readonly string[]).includes(kind)) requireOperator(scope);
    } catch (e) {
      return Promise.reject(e);
    }
    const query = { kind, ...params } as RuntimeQuery;
    return this.nats.request(RuntimeSubjects.query, { scope, query }) as Promise<RuntimeQueryResult<K>>;
  }

  async command(scope: CallerScope, command: RuntimeCommand): Promise<void> {
    if (command.kind === 'mediaserver.update') requireOperator(scope);
    await this.nats.request(RuntimeSubjects.command, { scope, command });
  }
}
