import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ContractViolation,
  DomainError,
  RuntimeSubjects,
  type EdgeBatch,
  type EdgeBatchResult,
  type EdgeOutcome,
  type EdgeReport,
  type WireError,
} from '@switchboard/contracts';
import { isDependencyDown, JsonLogger } from '@switchboard/service-kit';
import { parseCommand, parseEdge, parseEdgeReport, parseQuery } from '../model/wire.js';
import { CommandService } from '../runtime/command.service.js';
import { EdgeService } from '../runtime/edge.service.js';
import { GatewaySessions } from '../runtime/gateway-sessions.js';
import { QueryService } from '../runtime/query.service.js';
import { isRedisAnswer } from '../store/redis-connection.js';

/**
 * The registry's NATS surface (queue group `runtime-registry`: one replica answers each request):
 * - `runtime-registry.v1.query`   { scope, query }   -> the result of the query kind
 * - `runtime-registry.v1.command` { scope, command } -> null
 * - `runtime-registry.v1.edge`    { report }         -> EdgeResults[kind]; a batch -> EdgeBatchResult;
 *                                                       a gateway's reads: its sessions -> EdgeSessionsResult,
 *                                                       its clients -> EdgeGatewayClientsResult
 * Errors cross as typed WireErrors (ValidationFailed, NotFound, Forbidden, Conflict, Unavailable).
 */
@Controller()
export class RuntimeRpc {
  constructor(
    private readonly queries: QueryService,
    private readonly commands: CommandService,
    private readonly edge: EdgeService,
    private readonly gatewaySessions: GatewaySessions,
    private readonly logger: JsonLogger,
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
    return answer<unknown>(() => {
      const parsed = parseEdge(body);
      if ('batch' in parsed) return this.batch(parsed.batch);
      if ('sessions' in parsed) return this.gatewaySessions.sessions(parsed.sessions);
      if ('gatewayClients' in parsed) return this.gatewaySessions.gatewayClients(parsed.gatewayClients);
      return this.edge.handle(parsed.report);
    });
  }

  /**
   * An EdgeBatch: its sequences run concurrently, the reports of each in order, each answered as
   * if reported alone (its result, or its error as the wire error a single request would get).
   * A failure ends its sequence: the reports after it are `skipped` (not applied). Consecutive
   * reports that EdgeService applies together (a client's register, join, open and state changes)
   * run as one script (`EdgeService.together`).
   */
  private async batch(batch: EdgeBatch): Promise<EdgeBatchResult> {
    const parse = (reports: unknown[], s: number, i: number) =>
      parseEdgeReport(reports[i], `report.sequences.${s}.${i}`);
    const run = async (reports: unknown[], s: number): Promise<EdgeOutcome[]> => {
      const out: EdgeOutcome[] = [];
      while (out.length < reports.length) {
        if (out.length && 'error' in out[out.length - 1]!) {
          while (out.length < reports.length) out.push({ skipped: true });
          break;
        }
        const i = out.length;
        let report: EdgeReport;
        try {
          report = parse(reports, s, i);
        } catch (e) {
          out.push({ error: this.wireError(e) });
          continue;
        }
        // The reports after it that go together with it (an invalid one is refused on its turn).
        const group = [report];
        for (let j = i + 1; j < reports.length; j++) {
          let next: EdgeReport;
          try {
            next = parse(reports, s, j);
          } catch {
            break;
          }
          if (!EdgeService.together(report, next)) break;
          group.push(next);
        }
        if (group.length === 1) {
          try {
            out.push({ ok: await answer(() => this.edge.handle(report)) });
          } catch (e) {
            out.push({ error: this.wireError(e) });
          }
          continue;
        }
        try {
          for (const o of await answer(() => this.edge.together(group)))
            out.push('ok' in o ? { ok: o.ok } : { error: this.wireError(unavailableIfUnreachable(o.error)) });
        } catch (e) {
          out.push({ error: this.wireError(e) });
        }
      }
      return out;
    };
    return { sequences: await Promise.all(batch.sequences.map((reports, s) => run(reports, s))) };
  }

  /**
   * The error a single request would answer (what the service's error filter makes of it); unexpected ones are logged.
   */
  private wireError(e: unknown): WireError {
    if (e instanceof DomainError) return e.toWire();
    if (e instanceof ContractViolation) return new DomainError('ValidationFailed', e.message, e.errors).toWire();
    this.logger.event('error', 'edge report failed', { error: e instanceof Error ? e.message : String(e) });
    return new DomainError('Internal', 'internal error').toWire();
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
    throw unavailableIfUnreachable(e);
  }
}

/** A Redis that cannot be reached as Unavailable; any other error as it is. */
function unavailableIfUnreachable(e: unknown): unknown {
  if (e instanceof DomainError || e instanceof ContractViolation) return e;
  if (!isRedisAnswer(e) && isDependencyDown(e))
    return new DomainError('Unavailable', 'The runtime datastore is unavailable.');
  return e;
}
