// Latency recorder: counts, errors and percentiles per operation.

export class OperationStats {
  constructor() {
    /** @type {Map<string, { samples: number[]; errors: number }>} */
    this.ops = new Map();
  }

  entry(name) {
    let e = this.ops.get(name);
    if (!e) this.ops.set(name, (e = { samples: [], errors: 0 }));
    return e;
  }

  /**
   * Times `fn` under `name`; rethrows its error after counting it. Not an async function: one
   * `then` on fn's promise rather than an extra promise and await per operation timed.
   */
  time(name, fn) {
    const started = performance.now();
    let promise;
    try {
      promise = fn();
    } catch (error) {
      this.entry(name).errors++;
      return Promise.reject(error);
    }
    return Promise.resolve(promise).then(
      (value) => {
        this.entry(name).samples.push(performance.now() - started);
        return value;
      },
      (error) => {
        this.entry(name).errors++;
        throw error;
      },
    );
  }

  record(name, ms) {
    this.entry(name).samples.push(ms);
  }

  summary() {
    const out = {};
    for (const [name, { samples, errors }] of [...this.ops].sort(([a], [b]) => a.localeCompare(b))) {
      out[name] = { count: samples.length, errors, latencyMs: percentiles(samples) };
    }
    return out;
  }
}

export function percentiles(samples) {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  const round = (n) => Math.round(n * 100) / 100;
  return {
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1]),
    mean: round(sorted.reduce((s, v) => s + v, 0) / sorted.length),
  };
}
