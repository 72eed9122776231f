import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ContractViolation, DomainError, RuntimeSubjects } from '@switchboard/contracts';
import { ReplyError } from 'ioredis';
import { parseCommand, parseEdge, parseQuery } from '../model/wire.js';
import { CommandService } from '../runtime/command.service.js';
import { EdgeService } from '../runtime/edge.service.js';
import { QueryService } from '../runtime/query.service.js';

/**
 * The registry's NATS surface (queue group `runtime-registry`: one replica answers each request):
 * - `runtime-registry.v1.query`   { scope, query }   -> the result of the query kind
 * - `runtime-registry.v1.command` { scope, command } -> null
 * - `runtime-registry.v1.edge`    { report }         -> EdgeResults[kind]
 * Errors cross as typed WireErrors (ValidationFailed, NotFound, Forbidden, Conflict, Unavailable).
 */
@Controller()
export class RuntimeRpc {
  constructor(
    private readonly queries: QueryService,
    private readonly commands: CommandService,
    private readonly edge: EdgeService,
  ) {}

  @MessagePattern(RuntimeSubjects.query)
  query(@Payload() body: unknown): Promise<unknown> {
    return answer(() => {
      const { scope, query } = parseQuery(body);
      return this.queries.handle(scope, query);
    });
  }

  @MessagePattern(RuntimeSubjects.command)
  command(@Payload() body: unknown): Promise<null> {
    return answer(() => {
      const { scope, command } = parseCommand(body);
      return this.commands.handle(scope, command);
    });
  }

  @MessagePattern(RuntimeSubjects.edge)
  report(@Payload() body: unknown): Promise<unknown> {
    return answer(() => {
      const { report } = parseEdge(body);
      return this.edge.handle(report);
    });
  }
}

/**
 * Runs a handler; a Redis that cannot be reached (connecting, down, timed out) answers Unavailable
 * rather than Internal. Errors Redis itself answered (a script error) stay internal errors.
 */
async function answer<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof DomainError || e instanceof ContractViolation) throw e;
    if (!(e instanceof (ReplyError as new () => Error)) && isConnectivity(e)) throw new DomainError('Unavailable', 'The runtime datastore is unavailable.');
    throw e;
  }
}

function isConnectivity(e: unknown): boolean {
  const err = e as { name?: string; message?: string; code?: string };
  return (
    err?.name === 'MaxRetriesPerRequestError' ||
    /Stream isn't writeable|Connection is closed|connect ECONNREFUSED|ETIMEDOUT|ECONNRESET|EPIPE/i.test(err?.message ?? '') ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(err?.code ?? '')
  );
}
