// A /sync client speaking the frame protocol of docs/sync-protocol.md.
import WebSocket from 'ws';

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
 * SyncRequestError (code of the error frame), `onPush` sees every push, `closed` resolves with the
 * close code and reason.
 */
export class SyncClient {
  /** @param {WebSocket} ws */
  constructor(ws, { requestTimeoutMs = 10000 } = {}) {
    this.ws = ws;
    this.requestTimeoutMs = requestTimeoutMs;
    this.next = 1;
    /** @type {Map<number, { resolve: Function; reject: Function; timer: NodeJS.Timeout; type: string }>} */
    this.pending = new Map();
    this.pushes = 0;
    /** @type {Array<(push: any) => void>} */
    this.pushListeners = [];
    /** @type {Array<any>} */
    this.frameErrors = [];
    this.closeInfo = null;
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString('utf8') };
        for (const [, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(new SyncRequestError(p.type, { code: 'Closed', message: `socket closed (${code})` }));
        }
        this.pending.clear();
        resolve(this.closeInfo);
      });
    });
    ws.on('error', () => {});
    ws.on('message', (raw) => {
      let frame;
      try {
        frame = JSON.parse(raw.toString('utf8'));
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
      if (!waiting) return;
      this.pending.delete(frame.id);
      clearTimeout(waiting.timer);
      if (frame.type === 'result') waiting.resolve(frame.data);
      else waiting.reject(new SyncRequestError(waiting.type, frame.error));
    });
  }

  static connect(url, options = {}) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: options.requestTimeoutMs ?? 10000 });
      ws.once('open', () => resolve(new SyncClient(ws, options)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    });
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  onPush(listener) {
    this.pushListeners.push(listener);
  }

  request(type, data) {
    if (!this.open) return Promise.reject(new SyncRequestError(type, { code: 'Closed', message: 'socket is not open' }));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new SyncRequestError(type, { code: 'ClientTimeout', message: `no answer within ${this.requestTimeoutMs} ms` }));
      }, this.requestTimeoutMs);
      this.pending.set(id, { resolve, reject, timer, type });
      this.ws.send(JSON.stringify(data === undefined ? { id, type } : { id, type, data }));
    });
  }

  /**
   * Runs `fn` (which sends requests) with the socket corked: what it sends leaves in one write
   * rather than one per frame (pipelined requests; see Simulation#connectPipelined).
   */
  batch(fn) {
    // ws keeps its net.Socket as `_socket`; without it, frames simply go out one by one.
    const socket = this.ws._socket;
    if (typeof socket?.cork !== 'function') return fn();
    socket.cork();
    try {
      return fn();
    } finally {
      socket.uncork();
    }
  }

  close(code = 1000) {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code);
    return this.closed;
  }

  terminate() {
    this.ws.terminate();
    return this.closed;
  }
}
