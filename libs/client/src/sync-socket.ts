import type {
  ServerPush,
  SyncErrorBody,
  SyncRequestDataOf,
  SyncRequestType,
  SyncResults,
  SyncServerFrame,
} from '@switchboard/contracts';
import { ClientError, SyncError } from './errors.js';
import type { SocketCloseEvent, WebSocketConstructor, WebSocketLike } from './platform.js';

export interface SyncSocketHandlers {
  push(push: ServerPush): void;
  /** An error frame without a request id (a frame the gateway could not read). */
  frameError(error: SyncError): void;
  close(event: SocketCloseEvent): void;
}

interface Pending {
  type: string;
  resolve(data: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * One `/sync` WebSocket: requests with ids, answers matched by id (so requests may be pipelined),
 * pushes handed on in the order they arrive.
 */
export class SyncSocket {
  private readonly pending = new Map<string | number, Pending>();
  private closed = false;

  private constructor(
    private readonly ws: WebSocketLike,
    private readonly nextId: () => number,
    private readonly timeoutMs: number,
    private readonly handlers: SyncSocketHandlers,
  ) {
    ws.onmessage = (event: { data: unknown }) => this.receive(String(event.data));
    ws.onclose = (event: Partial<SocketCloseEvent>) =>
      this.closedBy({ code: event.code ?? 1006, reason: event.reason ?? '' });
  }

  /** Opens the socket; rejects with `ConnectionLost` when it does not open. */
  static open(
    WebSocket: WebSocketConstructor,
    url: string,
    options: { nextId: () => number; timeoutMs: number; handlers: SyncSocketHandlers },
  ): Promise<SyncSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const socket = new SyncSocket(ws, options.nextId, options.timeoutMs, options.handlers);
      ws.onopen = () => resolve(socket);
      ws.onerror = () => reject(new ClientError('ConnectionLost', `the socket to ${url} did not open`));
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends a request at once; resolves with its result data, rejects with a SyncError or a ClientError. */
  request<T extends SyncRequestType>(type: T, data?: SyncRequestDataOf<T>): Promise<SyncResults[T]> {
    if (this.closed) return Promise.reject(new ClientError('ConnectionLost', `${type}: the socket is closed`));
    const id = this.nextId();
    return new Promise<SyncResults[T]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ClientError('RequestTimeout', `${type}: no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { type, resolve: resolve as (data: unknown) => void, reject, timer });
      this.ws.send(JSON.stringify(data === undefined ? { id, type } : { id, type, data }));
    });
  }

  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    this.ws.close(code, reason);
    this.closedBy({ code, reason });
  }

  private receive(text: string): void {
    let frame: SyncServerFrame;
    try {
      frame = JSON.parse(text) as SyncServerFrame;
    } catch {
      return;
    }
    if (frame.type === 'push') return this.handlers.push(frame.push);
    if (frame.type === 'error' && frame.id === null) return this.handlers.frameError(new SyncError(null, frame.error));
    if (frame.id === null) return;
    const pending = this.pending.get(frame.id);
    if (!pending) return;
    this.pending.delete(frame.id);
    clearTimeout(pending.timer);
    if (frame.type === 'result') pending.resolve(frame.data);
    else pending.reject(new SyncError(pending.type, frame.error as SyncErrorBody));
  }

  /** Requests still waiting are dropped by the gateway with the socket: they fail with `ConnectionLost`. */
  private closedBy(event: SocketCloseEvent): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new ClientError('ConnectionLost', `${pending.type}: the socket closed (${event.code}) first`));
    }
    this.pending.clear();
    this.handlers.close(event);
  }
}
