// A /sync client speaking the frame protocol of docs/sync-protocol.md, over the lean RFC 6455
// client of websocket.mjs (one real TCP connection and WebSocket per client).
import { OPEN, WebSocketClient } from './websocket.mjs';

export class SyncRequestError extends Error {
  constructor(type, error) {
    super(`${type}: ${error.code}: ${error.message}`);
    this.name = 'SyncRequestError';
    this.type = type;
    this.code = error.code;
    this.details = error.details ?? [];
  }
}

/**
 * One client socket: `request(type, data)` resolves with the result data or rejects with a
 * SyncRequestError (code of the error frame; `ClientTimeout` when no answer came within
 * `requestTimeoutMs`, `Closed` when the socket closed first), `onPush` sees every push, `closed`
 * resolves with the close code and reason.
 */
export class SyncClient {
  /** @param {WebSocketClient} ws */
  constructor(ws, { requestTimeoutMs = 10000 } = {}) {
    this.ws = ws;
    this.requestTimeoutMs = requestTimeoutMs;
    this.next = 1;
    /**
     * Requests in flight by id, in the order sent, which is also the order of their deadlines
     * (one timeout for all): the first one is always the next to expire.
     * @type {Map<number, { resolve: Function; reject: Function; type: string; deadline: number }>}
     */
    this.pending = new Map();
    /** One timer per client, armed for the oldest request in flight (not one per request). */
    this.timer = null;
    this.pushes = 0;
    /** @type {Array<(push: any) => void>} */
    this.pushListeners = [];
    /** @type {Array<any>} */
    this.frameErrors = [];
    this.closeInfo = null;
    this.closed = new Promise((resolve) => {
      ws.onclose = (code, reason) => {
        this.closeInfo = { code, reason };
        clearTimeout(this.timer);
        this.timer = null;
        for (const [, p] of this.pending)
          p.reject(new SyncRequestError(p.type, { code: 'Closed', message: `socket closed (${code})` }));
        this.pending.clear();
        resolve(this.closeInfo);
      };
    });
    ws.onmessage = (text) => this.receive(text);
  }

  static connect(url, options = {}) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocketClient(url, { handshakeTimeoutMs: options.requestTimeoutMs ?? 10000 });
      // Created before the handshake ends, so frames arriving with the handshake answer find it.
      const client = new SyncClient(ws, options);
      ws.onopen = () => resolve(client);
      // After the open, errors (a reset, a protocol violation) show as the close that follows.
      ws.onerror = reject;
    });
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame.type === 'push') {
      this.pushes++;
      for (const listener of this.pushListeners) listener(frame.push);
      return;
    }
    if (frame.id === null || frame.id === undefined) {
      this.frameErrors.push(frame.error);
      return;
    }
    const waiting = this.pending.get(frame.id);
    // Unknown, or answered too late: its request already failed with ClientTimeout.
    if (!waiting) return;
    this.pending.delete(frame.id);
    if (frame.type === 'result') waiting.resolve(frame.data);
    else waiting.reject(new SyncRequestError(waiting.type, frame.error));
  }

  get open() {
    return this.ws.readyState === OPEN;
  }

  onPush(listener) {
    this.pushListeners.push(listener);
  }

  request(type, data) {
    if (!this.open)
      return Promise.reject(new SyncRequestError(type, { code: 'Closed', message: 'socket is not open' }));
    const id = this.next++;
    const text = JSON.stringify(data === undefined ? { id, type } : { id, type, data });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, type, deadline: performance.now() + this.requestTimeoutMs });
      if (this.timer === null) this.armTimer(this.requestTimeoutMs);
      this.ws.send(text);
    });
  }

  /**
   * The timer is not cleared when answers come (that would cost a timer per burst of requests):
   * when it fires it fails the requests past their deadline and re-arms for the oldest left.
   * Unref'd: while a request waits, its socket keeps the process alive anyway.
   */
  armTimer(ms) {
    this.timer = setTimeout(() => this.expire(), Math.max(1, Math.ceil(ms))).unref();
  }

  expire() {
    this.timer = null;
    const now = performance.now();
    for (const [id, p] of this.pending) {
      if (p.deadline > now) return this.armTimer(p.deadline - now);
      this.pending.delete(id);
      p.reject(
        new SyncRequestError(p.type, {
          code: 'ClientTimeout',
          message: `no answer within ${this.requestTimeoutMs} ms`,
        }),
      );
    }
  }

  /**
   * Runs `fn` (which sends requests) so that what it sends leaves in one write rather than one per
   * frame (pipelined requests; see Simulation#connectPipelined).
   */
  batch(fn) {
    return this.ws.batch(fn);
  }

  close(code = 1000) {
    this.ws.close(code);
    return this.closed;
  }

  terminate() {
    this.ws.terminate();
    return this.closed;
  }
}
