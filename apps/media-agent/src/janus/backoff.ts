/** Exponential backoff between reconnect attempts: min, 2×min, 4×min … capped at max, ±20 % jitter. */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt. */
  next(): number {
    const base = Math.min(this.maxMs, this.minMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    // Jitter keeps the agents of many pods from reconnecting in step after their Janus restarts.
    return Math.round(base * (0.8 + 0.4 * this.random()));
  }

  /** After a success the next failure waits the shortest delay again. */
  reset(): void {
    this.failures = 0;
  }
}
