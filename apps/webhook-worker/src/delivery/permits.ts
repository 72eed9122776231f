/**
 * A counting semaphore: `acquire` resolves once one of `count` permits is free (first come, first
 * served); `release` hands it to the next waiter.
 */
export class Permits {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(count: number) {
    this.free = count;
  }

  /** No permit free: `acquire` would wait. */
  get exhausted(): boolean {
    return this.free === 0;
  }

  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
