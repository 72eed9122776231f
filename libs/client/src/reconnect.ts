export interface ReconnectOptions {
  /** First delay before reconnecting (default 250 ms); it doubles with each failed attempt. */
  initialDelayMs?: number;
  /** Largest delay between attempts (default 5 s). */
  maxDelayMs?: number;
  /** Stop trying after this long (default 60 s; the server's grace period is 10 s by default). */
  giveUpAfterMs?: number;
}

/** Exponential backoff with jitter, bounded in time. */
export class ReconnectPolicy {
  attempts = 0;
  private readonly startedAt = Date.now();
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly giveUpAfterMs: number;

  constructor(options: ReconnectOptions = {}) {
    this.initialDelayMs = options.initialDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 5000;
    this.giveUpAfterMs = options.giveUpAfterMs ?? 60000;
  }

  /** The delay before the next attempt, or undefined once it is time to give up. */
  next(): number | undefined {
    if (Date.now() - this.startedAt >= this.giveUpAfterMs) return undefined;
    const base = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** this.attempts);
    this.attempts += 1;
    // ±20% so that clients dropped together do not come back together.
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }
}
