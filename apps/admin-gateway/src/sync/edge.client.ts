import { Injectable } from '@nestjs/common';
import { RuntimeSubjects, type EdgeReport, type EdgeResults } from '@switchboard/contracts';
import { NatsClient } from '@switchboard/service-kit';

export type EdgeReportOf<K extends EdgeReport['kind']> = Extract<EdgeReport, { kind: K }>;

/** Reports what happens at the edge to runtime-registry (`runtime-registry.v1.edge`), one request per report. */
@Injectable()
export class EdgeClient {
  constructor(private readonly nats: NatsClient) {}

  async report<K extends EdgeReport['kind']>(report: EdgeReportOf<K>): Promise<Partial<EdgeResults[K]>> {
    const answer = await this.nats.request(RuntimeSubjects.edge, { report });
    return (answer ?? {}) as Partial<EdgeResults[K]>;
  }
}
