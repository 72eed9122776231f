// What the receiver got: when each event arrived, and a wait for a phase's events to arrive.
export class Deliveries {
  /** event id -> { at, latency } */
  received = new Map();
  requests = 0;
  /** Ids a phase waits for (see waitFor), deleted as they arrive: no polling over every id. */
  #awaited = new Set();
  #allArrived = () => {};

  /** Records the events of one request body (a single event or a `batch`) read at `at`. */
  record(text, at) {
    this.requests++;
    const body = JSON.parse(text);
    for (const e of body.batch ?? [body]) {
      if (this.received.has(e.id)) continue;
      this.received.set(e.id, { at, latency: at - e.timestamp });
      if (this.#awaited.delete(e.id) && this.#awaited.size === 0) this.#allArrived();
    }
  }

  /** Resolves to true once every one of `ids` arrived, to false after `timeoutMs`. */
  async waitFor(ids, timeoutMs) {
    this.#awaited = new Set(ids.filter((id) => !this.received.has(id)));
    if (this.#awaited.size === 0) return true;
    let timer;
    const arrived = await Promise.race([
      new Promise((r) => (this.#allArrived = () => r(true))),
      new Promise((r) => (timer = setTimeout(() => r(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    this.#awaited = new Set();
    this.#allArrived = () => {};
    return arrived;
  }
}
