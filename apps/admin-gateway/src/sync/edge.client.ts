import { Injectable } from '@nestjs/common';
import {
  DomainError,
  EDGE_BATCH_MAX_REPORTS,
  RuntimeSubjects,
  type ClientRef,
  type EdgeBatchResult,
  type EdgeGatewayClientsRead,
  type EdgeGatewayClientsResult,
  type EdgeOutcome,
  type EdgeReport,
  type EdgeResults,
  type EdgeSessionsRead,
  type EdgeSessionsResult,
} from '@switchboard/contracts';
import { NatsClient } from '@switchboard/service-kit';

export type EdgeReportOf<K extends EdgeReport['kind']> = Extract<EdgeReport, { kind: K }>;

interface PendingSequence {
  reports: EdgeReport[];
  resolve: (outcomes: EdgeOutcome[]) => void;
}

/**
 * A batch request goes out before its reports could exceed this many bytes (well below NATS'
 * default 1 MiB max payload; a report is about as large as the frame it comes from).
 */
const MAX_BATCH_BYTES = 256 * 1024;

/**
 * Reports what happens at the edge to runtime-registry (`runtime-registry.v1.edge`). The sequences of
 * one event-loop turn travel in one batch request: a burst of clients costs one NATS round trip.
 */
@Injectable()
export class EdgeClient {
  private pending: PendingSequence[] = [];
  private pendingReports = 0;
  private pendingBytes = 0;
  private scheduled = false;

  constructor(private readonly nats: NatsClient) {}

  /** One report in a request of its own. */
  async report<K extends EdgeReport['kind']>(report: EdgeReportOf<K>): Promise<Partial<EdgeResults[K]>> {
    const answer = await this.nats.request(RuntimeSubjects.edge, { report });
    return (answer ?? {}) as Partial<EdgeResults[K]>;
  }

  /**
   * What the registry holds for these clients (at most EDGE_SESSIONS_MAX_CLIENTS, each a plain
   * ClientRef: the registry refuses other fields), one per client in order; null: not registered.
   * Throws when the answer is not one entry per client.
   */
  async sessions(clients: ClientRef[]): Promise<EdgeSessionsResult['clients']> {
    const report: EdgeSessionsRead = { kind: 'gateway.sessions', clients };
    const answer = (await this.nats.request(RuntimeSubjects.edge, { report })) as Partial<EdgeSessionsResult> | null;
    if (!Array.isArray(answer?.clients) || answer.clients.length !== clients.length)
      throw new Error('gateway.sessions answered an unreadable list');
    return answer.clients;
  }

  /**
   * A page of the clients the registry holds as registered through gateway replica `gatewayId`
   * (`cursor` absent to start; `next` null when done; a client may come twice).
   */
  async gatewayClients(gatewayId: string, cursor?: string, count?: number): Promise<EdgeGatewayClientsResult> {
    const report: EdgeGatewayClientsRead = {
      kind: 'gateway.clients',
      gatewayId,
      ...(cursor !== undefined ? { cursor } : {}),
      ...(count !== undefined ? { count } : {}),
    };
    return (await this.nats.request(RuntimeSubjects.edge, { report })) as EdgeGatewayClientsResult;
  }

  /**
   * Reports in order; resolves with one outcome per report (never rejects). The first failure ends
   * the sequence: the reports after it are `skipped` (not applied). `bytes`: about how large the
   * reports are (the frames they come from), to keep batch requests bounded.
   */
  sequence(reports: EdgeReport[], bytes = 0): Promise<EdgeOutcome[]> {
    if (reports.length === 0) return Promise.resolve([]);
    return new Promise<EdgeOutcome[]>((resolve) => {
      if (this.pendingReports + reports.length > EDGE_BATCH_MAX_REPORTS || this.pendingBytes + bytes > MAX_BATCH_BYTES)
        this.flush();
      this.pending.push({ reports, resolve });
      this.pendingReports += reports.length;
      this.pendingBytes += bytes;
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn: the frames of every socket read meanwhile join in.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.pendingReports = 0;
    this.pendingBytes = 0;
    void this.send(batch);
  }

  private async send(batch: PendingSequence[]): Promise<void> {
    let result: EdgeBatchResult | undefined;
    let failure: DomainError | undefined;
    try {
      result = (await this.nats.request(RuntimeSubjects.edge, {
        report: { kind: 'batch', sequences: batch.map((p) => p.reports) },
      })) as EdgeBatchResult;
    } catch (e) {
      failure = e instanceof DomainError ? e : new DomainError('Internal', 'edge batch failed');
    }
    batch.forEach((p, i) => {
      const outcomes = result?.sequences?.[i];
      if (outcomes && outcomes.length === p.reports.length) return p.resolve(outcomes);
      // The whole request failed (registry unreachable, timeout): as for a single request, the
      // first report gets the error and the others were not applied as far as the edge can tell.
      const error = (failure ?? new DomainError('Internal', 'the registry answered an unreadable batch')).toWire();
      p.resolve(p.reports.map((_, k) => (k === 0 ? { error } : { skipped: true })));
    });
  }
}
