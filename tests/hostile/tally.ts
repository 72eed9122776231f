/** What the corpus saw: answers by status, the violations of the error contracts, and the report file. */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@switchboard/testing';
import type { HostileAnswer } from './wire.js';

export type ErrorContract = 'problem' | 'odata';

export class Tally {
  total = 0;
  readonly byStatus: Record<string, number> = {};
  /** Violations grouped by interface, category, status and broken rule: how many, and one example. */
  readonly violations = new Map<string, { count: number; example: string }>();

  /**
   * Counts the answer and records why it breaks the contract, if it does. `group` is what the
   * violation is filed under (interface and category), `what` the request itself.
   */
  check(contract: ErrorContract, group: string, what: string, answer: HostileAnswer): void {
    this.total++;
    const key = answer.status === 0 ? 'no answer' : String(answer.status);
    this.byStatus[key] = (this.byStatus[key] ?? 0) + 1;
    const problem = violationOf(contract, answer);
    if (!problem) return;
    const filed = `${group} -> ${key} ${problem}`;
    const known = this.violations.get(filed);
    if (known) known.count++;
    else this.violations.set(filed, { count: 1, example: `${what}: ${answer.text.slice(0, 200)}` });
  }

  /** The violation groups filed since `mark` (a count of groups), as `group (n×) e.g. example`. */
  groupsSince(mark: number): string[] {
    return [...this.violations.entries()]
      .slice(mark)
      .map(([group, { count, example }]) => `${group} (${count}x) e.g. ${example}`);
  }

  count(status: string): void {
    this.total++;
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
  }

  serverErrors(): number {
    return Object.entries(this.byStatus)
      .filter(([status]) => /^5\d\d$/.test(status))
      .reduce((sum, [, n]) => sum + n, 0);
  }
}

function violationOf(contract: ErrorContract, answer: HostileAnswer): string | null {
  if (answer.status < 400 || answer.status > 499) return 'not a 4xx';
  const body = answer.body as Record<string, any> | undefined;
  if (contract === 'problem') {
    if (!answer.contentType.includes('application/problem+json')) return `content-type ${answer.contentType || 'none'}`;
    for (const member of ['type', 'title', 'status', 'detail', 'code', 'correlationId'])
      if (body?.[member] === undefined) return `no ${member}`;
    if (body!.status !== answer.status) return 'status member differs';
    if (answer.correlationId && body!.correlationId !== answer.correlationId)
      return 'correlationId differs from the header';
  } else {
    if (typeof body?.error?.code !== 'string' || typeof body.error.message !== 'string')
      return 'not an OData error body';
  }
  if (/\bat .*\.(js|ts):\d+|SELECT |INSERT |QueryFailedError/.test(answer.text)) return 'leaks a stack trace or SQL';
  return null;
}

export interface HostileReport {
  durationMs: number;
  totalRequests: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  violations: string[];
  syncFrames: number;
  syncViolations: string[];
  peakRssBytes: Record<string, number>;
  memoryLimitBytes: Record<string, number>;
}

export function writeReport(report: HostileReport): string {
  const file = path.join(repoRoot(), '.data', 'hostile-report.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
