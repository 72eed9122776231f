import { Injectable, Logger } from '@nestjs/common';
import { DeliveryRepository, type AttemptRow } from './delivery.repository.js';

interface Waiting {
  row: AttemptRow;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Writes logged attempts in groups: `record` resolves once the attempt (and the delivery's new
 * state) is committed. Rows wait at most `delayMs` (or until `maxRows` are waiting) and several
 * groups may be written at once, so a thousand attempts a second cost a few statements.
 */
@Injectable()
export class DeliveryLogWriter {
  private readonly logger = new Logger('DeliveryLogWriter');
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private idle: Array<() => void> = [];
  readonly maxRows = 500;
  readonly delayMs = 5;
  readonly maxConcurrent = 4;

  constructor(private readonly repository: DeliveryRepository) {}

  record(row: AttemptRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when everything recorded so far is written (or failed). */
  drain(): Promise<void> {
    if (this.waiting.length === 0 && this.inFlight === 0) return Promise.resolve();
    this.flushSoon(0);
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.waiting.length >= this.maxRows) this.flushSoon(0);
    else this.flushSoon(this.delayMs);
  }

  private flushSoon(delay: number): void {
    if (this.timer && delay > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delay);
  }

  private flush(): void {
    while (this.waiting.length > 0 && this.inFlight < this.maxConcurrent) {
      const group = this.waiting.splice(0, this.maxRows);
      this.inFlight++;
      this.repository
        .writeAttempts(group.map((w) => w.row))
        .then(
          () => group.forEach((w) => w.resolve()),
          (e: unknown) => {
            const error = e instanceof Error ? e : new Error(String(e));
            this.logger.warn(`writing ${group.length} delivery attempts failed: ${error.message}`);
            group.forEach((w) => w.reject(error));
          },
        )
        .finally(() => {
          this.inFlight--;
          if (this.waiting.length > 0) this.flushSoon(0);
          else if (this.inFlight === 0) this.idle.splice(0).forEach((r) => r());
        });
    }
  }
}
