/**
 * Says whether the predecessor of a task is still in progress somewhere (another replica, or about to reach this one).
 */
export type PredecessorCheck = () => Promise<boolean>;

interface Waiting {
  order: number;
  prev: number;
  arrival: number;
  since: number;
  /** Set once the predecessor is known to be out of the way (or waited for long enough). */
  cleared: boolean;
  check: PredecessorCheck | undefined;
  start: () => void;
}

interface KeyState {
  running: boolean;
  scheduled: boolean;
  checking: boolean;
  timer: NodeJS.Timeout | undefined;
  waiting: Waiting[];
  /** Highest order started on this key so far (0: none). */
  highest: number;
}

export interface KeySequencerOptions {
  /** How long a task waits for its predecessor (ms). */
  maxWaitMs: number;
  /** Pause between two predecessor checks (ms). */
  recheckMs: number;
  /** Idle keys remembered (for their highest order), at most. */
  maxKeys: number;
}

const DEFAULTS: KeySequencerOptions = { maxWaitMs: 10_000, recheckMs: 10, maxKeys: 100_000 };

/**
 * Runs tasks with the same key one after the other, lowest `order` first; tasks with different
 * keys run concurrently. Used for per-webhook, per-channel ordering of deliveries: `order` is the
 * stream sequence of the delivery's first event, `prev` the order of the delivery queued just
 * before it on the same key (0: none known). BullMQ hands jobs over only roughly in queue order and
 * another replica may hold the predecessor, so a task waits for a predecessor `check` says is in
 * progress, at most `maxWaitMs` (README "Ordering within a channel").
 */
export class KeySequencer {
  private readonly keys = new Map<string, KeyState>();
  private arrivals = 0;
  private readonly options: KeySequencerOptions;

  constructor(options: Partial<KeySequencerOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  run<T>(key: string, order: number, prev: number, task: () => Promise<T>, check?: PredecessorCheck): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const state = this.state(key);
      state.waiting.push({
        order,
        prev,
        arrival: this.arrivals++,
        since: performance.now(),
        cleared: prev <= 0 || prev >= order,
        check,
        start: () => {
          let p: Promise<T>;
          try {
            p = task();
          } catch (e) {
            p = Promise.reject(e instanceof Error ? e : new Error(String(e)));
          }
          p.then(resolve, reject).finally(() => {
            state.running = false;
            this.next(key, state);
          });
        },
      });
      if (!state.running && !state.scheduled) {
        state.scheduled = true;
        setImmediate(() => {
          state.scheduled = false;
          this.next(key, state);
        });
      }
    });
  }

  private state(key: string): KeyState {
    let state = this.keys.get(key);
    if (state) {
      // Most recently used last, so trimming drops the idle keys unused the longest.
      this.keys.delete(key);
      this.keys.set(key, state);
      return state;
    }
    state = { running: false, scheduled: false, checking: false, timer: undefined, waiting: [], highest: 0 };
    this.keys.set(key, state);
    if (this.keys.size > this.options.maxKeys) this.trim();
    return state;
  }

  private trim(): void {
    for (const [key, s] of this.keys) {
      if (this.keys.size <= this.options.maxKeys * 0.9) break;
      if (!s.running && !s.scheduled && !s.checking && s.waiting.length === 0 && !s.timer) this.keys.delete(key);
    }
  }

  private next(key: string, state: KeyState): void {
    if (state.running || state.checking || state.waiting.length === 0) return;
    if (state.timer) {
      clearTimeout(state.timer);
      state.timer = undefined;
    }
    let best = 0;
    for (let i = 1; i < state.waiting.length; i++) {
      const w = state.waiting[i]!;
      const b = state.waiting[best]!;
      if (w.order < b.order || (w.order === b.order && w.arrival < b.arrival)) best = i;
    }
    const chosen = state.waiting[best]!;
    if (!chosen.cleared && chosen.prev <= state.highest) chosen.cleared = true;
    if (!chosen.cleared) {
      const waited = performance.now() - chosen.since;
      if (!chosen.check || waited >= this.options.maxWaitMs) {
        chosen.cleared = true;
      } else {
        state.checking = true;
        chosen.check().then(
          (busy) => {
            state.checking = false;
            if (!busy) chosen.cleared = true;
            if (busy && !state.timer) {
              state.timer = setTimeout(() => {
                state.timer = undefined;
                this.next(key, state);
              }, this.options.recheckMs);
            } else {
              this.next(key, state);
            }
          },
          () => {
            state.checking = false;
            chosen.cleared = true;
            this.next(key, state);
          },
        );
        return;
      }
    }
    state.waiting.splice(best, 1);
    state.running = true;
    if (chosen.order > state.highest) state.highest = chosen.order;
    chosen.start();
  }

  /** Keys remembered (in progress, waiting or recently used). */
  get size(): number {
    return this.keys.size;
  }
}
