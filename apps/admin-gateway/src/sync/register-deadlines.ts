/**
 * The register deadlines of sockets that have not registered yet, with one timer for all of them
 * rather than a timer per socket (set and cleared for every client: measurable CPU at a thousand
 * clients a second). Every socket waits the same time, so the deadlines come due in the order the
 * sockets were added, and the timer only ever waits for the oldest one.
 */
export class RegisterDeadlines<T> {
  /** Insertion order is deadline order. */
  private readonly waiting = new Map<T, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly timeoutMs: number,
    private readonly expire: (item: T) => void,
  ) {}

  add(item: T): void {
    this.waiting.delete(item);
    this.waiting.set(item, performance.now() + this.timeoutMs);
    if (!this.timer) this.arm(this.timeoutMs);
  }

  /** Registered or gone: no deadline any more. */
  delete(item: T): void {
    this.waiting.delete(item);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting.clear();
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.fire(), ms);
    // Housekeeping only: the sockets themselves keep the process alive.
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const [item, deadline] of this.waiting) {
      if (deadline > now) {
        this.arm(Math.ceil(deadline - now));
        return;
      }
      this.waiting.delete(item);
      this.expire(item);
    }
  }
}
