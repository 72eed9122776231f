/**
 * Test doubles of the services the gateway talks to, answering on the real NATS of the jest run
 * in the Nest packet format (request `{ pattern, data, id }`, reply `{ id, response }` or
 * `{ id, err: { code, message } }`): runtime-registry (query, command, edge), management-api
 * (API key verification, application resolution). Every request is recorded.
 */
import { connect, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  pushSubject,
  RuntimeSubjects,
  Subjects,
  type CallerScope,
  type EdgeBatch,
  type EdgeOutcome,
  type EdgeReport,
  type ErrorCode,
  type Heartbeat,
  type PushBatch,
  type ResolvedApplication,
  type RuntimeCommand,
  type RuntimeQuery,
} from '@switchboard/contracts';
import { NO_SETTINGS } from '../sync/sync-step.js';

export class WireFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const OPERATOR_KEY = 'sb_operator-key-for-tests';
export const TENANT_KEY = 'sb_tenant-key-for-tests';
export const OPERATOR_SCOPE: CallerScope = { organizationId: 'org-1', operator: true, principal: 'key-operator' };
export const TENANT_SCOPE: CallerScope = { organizationId: 'org-1', operator: false, principal: 'key-tenant' };

/** The settings the fake answers for every connection: the gateway's own default. */
export const DEFAULT_SETTINGS = NO_SETTINGS;

type Handler<T> = (request: T) => unknown;

export interface FakeRuntime {
  nc: NatsConnection;
  queries: Array<{ scope: CallerScope; query: RuntimeQuery }>;
  commands: Array<{ scope: CallerScope; command: RuntimeCommand }>;
  reports: EdgeReport[];
  /** The sequences of each batch request (`EdgeBatch`), as received. */
  batches: EdgeReport[][][];
  resolves: string[];
  heartbeats: Heartbeat[];
  applications: Map<string, ResolvedApplication>;
  onQuery: Handler<{ scope: CallerScope; query: RuntimeQuery }>;
  onCommand: Handler<{ scope: CallerScope; command: RuntimeCommand }>;
  onEdge: Handler<EdgeReport>;
  /**
   * The outcomes of a whole sequence of a batch, when a test needs more than `onEdge` (as the
   * registry answers a sequence it applied in one step); undefined: each report through `onEdge`.
   */
  onSequence?: (reports: EdgeReport[]) => EdgeOutcome[] | undefined;
  push(gatewayId: string, batch: PushBatch, nestPacket?: boolean): Promise<void>;
  applicationChanged(applicationId: string): Promise<void>;
  reportsOf(clientId: string): EdgeReport[];
  close(): Promise<void>;
}

export function defaultEdgeAnswer(report: EdgeReport): unknown {
  switch (report.kind) {
    case 'client.join':
      return {
        channel: { id: report.channelId, userCount: 1, deviceCount: 1, clientCount: 1, connectionCount: 0 },
        settings: DEFAULT_SETTINGS,
      };
    case 'connection.open':
      return {
        mediaServerId: report.type === 'peer' ? null : '00000000-0000-4000-8000-000000000001',
        settings: DEFAULT_SETTINGS,
      };
    case 'client.message':
      return { delivered: 1 };
    case 'client.register':
    case 'client.update':
    case 'client.leave':
    case 'client.stats':
    case 'client.unregister':
    case 'connection.state':
    case 'connection.update':
    case 'connection.close':
    case 'connection.stats':
    case 'connection.relay':
    default:
      return { ok: true };
  }
}

export async function startFakeRuntime(natsUrl: string, namespace: string): Promise<FakeRuntime> {
  const nc = await connect({ servers: natsUrl });
  const subs: Subscription[] = [];
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const fake: FakeRuntime = {
    nc,
    queries: [],
    commands: [],
    reports: [],
    batches: [],
    resolves: [],
    heartbeats: [],
    applications: new Map(),
    onQuery: ({ query }) => ({ answeredKind: query.kind }),
    onCommand: () => null,
    onEdge: defaultEdgeAnswer,
    async push(gatewayId, batch, nestPacket = false) {
      nc.publish(
        pushSubject(namespace, gatewayId),
        encoder.encode(JSON.stringify(nestPacket ? { pattern: 'gateway.v1.push', data: batch } : batch)),
      );
      await nc.flush();
    },
    async applicationChanged(applicationId) {
      nc.publish(
        `${namespace}.${RuntimeSubjects.applicationChanged}`,
        encoder.encode(JSON.stringify({ pattern: RuntimeSubjects.applicationChanged, data: { applicationId } })),
      );
      await nc.flush();
    },
    reportsOf(clientId) {
      return fake.reports.filter((r) => r.client.clientId === clientId);
    },
    async close() {
      for (const s of subs) s.unsubscribe();
      await nc.close();
    },
  };

  const respond = (subject: string, handle: (data: unknown) => unknown) => {
    subs.push(
      nc.subscribe(`${namespace}.${subject}`, {
        callback: (err, msg: Msg) => {
          if (err) return;
          const packet = JSON.parse(decoder.decode(msg.data)) as { id: string; data: unknown };
          void (async () => {
            let reply: Record<string, unknown>;
            try {
              reply = { id: packet.id, response: (await handle(packet.data)) ?? null, isDisposed: true };
            } catch (e) {
              const failure = e instanceof WireFailure ? e : new WireFailure('Internal', (e as Error).message);
              reply = { id: packet.id, err: { code: failure.code, message: failure.message }, isDisposed: true };
            }
            msg.respond(encoder.encode(JSON.stringify(reply)));
          })();
        },
      }),
    );
  };

  respond(RuntimeSubjects.query, (data) => {
    const request = data as { scope: CallerScope; query: RuntimeQuery };
    fake.queries.push(request);
    return fake.onQuery(request);
  });
  respond(RuntimeSubjects.command, (data) => {
    const request = data as { scope: CallerScope; command: RuntimeCommand };
    fake.commands.push(request);
    return fake.onCommand(request);
  });
  const edgeReport = (report: EdgeReport) => {
    fake.reports.push(report);
    return fake.onEdge(report);
  };
  respond(RuntimeSubjects.edge, async (data) => {
    const { report } = data as { report: EdgeReport | EdgeBatch };
    if (report.kind !== 'batch') return edgeReport(report);
    fake.batches.push(report.sequences);
    // As the registry does: each sequence in order, a failure ends it (the rest is not applied).
    const sequences: EdgeOutcome[][] = [];
    for (const reports of report.sequences) {
      const answered = fake.onSequence?.(reports);
      if (answered) {
        fake.reports.push(...reports.slice(0, answered.filter((o) => !('skipped' in o)).length));
        sequences.push(answered);
        continue;
      }
      const outcomes: EdgeOutcome[] = [];
      for (const r of reports) {
        if (outcomes.some((o) => 'error' in o)) {
          outcomes.push({ skipped: true });
          continue;
        }
        try {
          outcomes.push({ ok: (await edgeReport(r)) ?? null });
        } catch (e) {
          const failure = e instanceof WireFailure ? e : new WireFailure('Internal', (e as Error).message);
          outcomes.push({ error: { code: failure.code, message: failure.message } });
        }
      }
      sequences.push(outcomes);
    }
    return { sequences };
  });
  respond(RuntimeSubjects.resolveApplication, (data) => {
    const { applicationId } = data as { applicationId: string };
    fake.resolves.push(applicationId);
    const application = fake.applications.get(applicationId);
    if (!application) throw new WireFailure('NotFound', `no application ${applicationId}`);
    return application;
  });
  respond(Subjects.apiKeyVerify, (data) => {
    const { apiKey } = data as { apiKey: string };
    if (apiKey === OPERATOR_KEY)
      return { valid: true, keyId: OPERATOR_SCOPE.principal, organizationId: 'org-1', operator: true };
    if (apiKey === TENANT_KEY)
      return { valid: true, keyId: TENANT_SCOPE.principal, organizationId: 'org-1', operator: false };
    return { valid: false };
  });
  subs.push(
    nc.subscribe(`${namespace}.${RuntimeSubjects.heartbeat}`, {
      callback: (err, msg) => {
        if (!err) fake.heartbeats.push((JSON.parse(decoder.decode(msg.data)) as { data: Heartbeat }).data);
      },
    }),
  );
  await nc.flush();
  return fake;
}
