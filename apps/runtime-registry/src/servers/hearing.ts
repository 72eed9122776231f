/**
 * A source this replica needs to hear heartbeats: NATS (connected, heartbeat subscription confirmed) and Redis (to
 * record them).
 */
export type HearingSource = 'nats' | 'redis';

export interface HearingState {
  /**
   * How long this replica has heard and recorded heartbeats without interruption (ms, monotonic); 0 while it cannot.
   */
  heardForMs: number;
  /** Changes with every interruption: a decision is sound only if the epoch did not change while its data was read. */
  epoch: number;
  /** What interrupted the hearing last (or what it still waits for). */
  reason: string;
}

/**
 * Whether this replica could have heard a heartbeat, and since when. Silence of a server only
 * means it is gone if the replica was listening the whole time: NATS connected with the heartbeat
 * subscription confirmed by the server, Redis connected, every received heartbeat recorded, and
 * the event loop running (a stalled process would sweep before it processes the heartbeats that
 * piled up meanwhile). Any interruption restarts the clock; a new replica starts with the clock at
 * zero. Monotonic time, never compared with the Redis clock the heartbeats are stamped with.
 */
export class Hearing {
  private readonly up: Record<HearingSource, boolean> = { nats: false, redis: false };
  private since: number;
  private lastTick: number;
  private epoch = 0;
  private reason = 'replica started';
  private closed = false;

  constructor(
    /** An observation of the event loop later than this after the previous one is a stall. */
    readonly stallMs: number,
    private readonly clock: () => number = () => performance.now(),
    /** Called when an interruption ends a stretch of hearing (not for each failure while already interrupted). */
    private readonly onInterrupted: (reason: string, heardForMs: number) => void = () => undefined,
  ) {
    this.since = clock();
    this.lastTick = this.since;
  }

  private get listening(): boolean {
    return this.up.nats && this.up.redis && !this.closed;
  }

  /** A source is (again) up: the clock restarts (a source seen up twice was lost in between). */
  sourceUp(source: HearingSource, reason: string): void {
    if (this.up[source]) this.interrupt(reason);
    this.up[source] = true;
    this.since = this.clock();
  }

  /** A source is lost: no hearing until it is up again. */
  sourceDown(source: HearingSource, reason: string): void {
    this.end(reason);
    this.up[source] = false;
  }

  /** Something heard may not have been recorded (a failed write, a failed sweep): the clock restarts. */
  interrupt(reason: string): void {
    this.end(reason);
    this.since = this.clock();
  }

  /** For good (shutdown; not reported as an interruption). */
  close(reason: string): void {
    if (this.listening) {
      this.epoch++;
      this.reason = reason;
    }
    this.closed = true;
  }

  /** Called by a timer every fraction of `stallMs`, and by every read of the state. */
  tick(): void {
    const now = this.clock();
    const gap = now - this.lastTick;
    this.lastTick = now;
    if (gap > this.stallMs) this.interrupt(`event loop stalled for ${Math.round(gap)} ms`);
  }

  state(): HearingState {
    this.tick();
    return {
      heardForMs: this.listening ? Math.max(0, this.clock() - this.since) : 0,
      epoch: this.epoch,
      reason: this.reason,
    };
  }

  private end(reason: string): void {
    if (!this.listening) return;
    const heard = this.clock() - this.since;
    this.epoch++;
    this.reason = reason;
    this.onInterrupted(reason, heard);
  }
}
