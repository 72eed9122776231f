import { Injectable, Logger } from '@nestjs/common';
import type { WebhookWorkerConfig } from '../config.js';
import { InjectWebhookConfig } from '../tokens.js';
import { DeliveryRepository, type AttemptRow } from './delivery.repository.js';

interface Waiting {
  row: AttemptRow;
  resolve: () => void;
}

/**
 * Writes logged attempts in groups, at least `WEBHOOK_LOG_INTERVAL_MS` apart, so high load costs a
 * statement every few ms instead of one per row (README "Grouped log statements"). `record`
 * resolves once the row is committed and never rejects: a failed group is written again after a
 * pause until PostgreSQL takes it. `expedite`: senders wait for the rows gathered here, so they go at once.
 */
@Injectable()
export class DeliveryLogWriter {
  private readonly logger = new Logger('DeliveryLogWriter');
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** `timer` is a setImmediate (a flush on the next turn), not the wait for the interval. */
  private timerImmediate = false;
  private inFlight = 0;
  private failures = 0;
  private lastStart = -Infinity;
  /** Senders wait for the rows waiting here (see expedite). */
  private urgent = false;
  private idle: Array<() => void> = [];
  readonly maxRows = 500;
  readonly maxConcurrent = 4;
  readonly minIntervalMs: number;

  constructor(
    private readonly repository: DeliveryRepository,
    @InjectWebhookConfig() config: Pick<WebhookWorkerConfig, 'logIntervalMs'>,
  ) {
    this.minIntervalMs = config.logIntervalMs;
  }

  record(row: AttemptRow): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push({ row, resolve });
      if (this.failures === 0 && this.inFlight < this.maxConcurrent) {
        if (this.urgent && this.inFlight === 0) this.flushNow();
        else this.flushSoon(this.untilNextStart());
      }
    });
  }

  /** Senders wait for rows to be committed: see the class comment. */
  expedite(): void {
    this.urgent = true;
    if (this.waiting.length > 0 && this.failures === 0 && this.inFlight === 0) this.flushNow();
  }

  /** How long until the next statement may start (0: now). */
  private untilNextStart(): number {
    return Math.max(0, Math.ceil(this.lastStart + this.minIntervalMs - performance.now()));
  }

  /** Resolves when everything recorded so far is committed, or after `timeoutMs`. */
  drain(timeoutMs = 10_000): Promise<void> {
    if (this.waiting.length === 0 && this.inFlight === 0) return Promise.resolve();
    if (this.failures === 0) this.flushSoon(0);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.logger.error(`${this.waiting.length} delivery attempts could not be logged before shutdown`);
        resolve();
      }, timeoutMs);
      this.idle.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /** A flush on the next turn, instead of at the end of the interval if one was waiting for it. */
  private flushNow(): void {
    if (this.timer && !this.timerImmediate) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushSoon(0);
  }

  private flushSoon(delay: number): void {
    if (this.timer) return;
    const run = () => {
      this.timer = undefined;
      this.flush();
    };
    this.timerImmediate = delay <= 0;
    this.timer = delay > 0 ? setTimeout(run, delay) : (setImmediate(run) as unknown as NodeJS.Timeout);
  }

  private flush(): void {
    while (this.waiting.length > 0 && this.inFlight < this.maxConcurrent) {
      const group = this.waiting.splice(0, this.maxRows);
      if (this.waiting.length === 0) this.urgent = false;
      this.inFlight++;
      this.lastStart = performance.now();
      this.repository
        .writeAttempts(group.map((w) => w.row))
        .then(
          () => {
            this.failures = 0;
            group.forEach((w) => w.resolve());
          },
          (e: unknown) => {
            this.failures++;
            if (this.failures === 1 || this.failures % 20 === 0) {
              this.logger.warn(
                `writing ${group.length} delivery attempts failed (${this.failures} times), trying again: ${(e as Error).message}`,
              );
            }
            this.waiting.unshift(...group);
          },
        )
        .finally(() => {
          this.inFlight--;
          if (this.waiting.length > 0) {
            if (this.failures > 0) this.flushSoon(Math.min(100 * 2 ** (this.failures - 1), 2000));
            else if (this.urgent) this.flushNow();
            else this.flushSoon(this.untilNextStart());
          } else if (this.inFlight === 0) this.idle.splice(0).forEach((r) => r());
        });
      if (this.failures > 0) break;
    }
  }
}
