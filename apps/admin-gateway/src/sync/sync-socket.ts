import type { SyncErrorBody, ServerPush, SyncRequestType, SyncServerFrame } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { ClientSession } from './client-session.js';

/** A request frame waiting for its turn (or for its answer) on a socket. */
export interface QueuedFrame {
  id: string | number;
  type: SyncRequestType;
  data: unknown;
  /** Size of the frame as received. */
  bytes: number;
}

export interface SocketLimits {
  maxSendBufferBytes: number;
  maxPendingRequests: number;
}

/** Why the gateway closed a socket: decides what happens to its session. */
export type CloseIntent = 'replaced' | 'unregistered' | 'left' | 'shutdown' | 'refused' | 'slow' | 'timeout';

/**
 * One `/sync` WebSocket: the JSON frames it sends (bounded by the send buffer: a client that does
 * not read is closed as a slow consumer, code 4029), its request queue (requests are handled in the
 * order sent, at most `maxPendingRequests` waiting), and the session it is attached to.
 */
export class SyncSocket {
  readonly id = randomUUID();
  session: ClientSession | null = null;
  /** A register request is being handled. */
  registering = false;
  /** Pushes are delivered only once the register result went out (they are kept until then). */
  ready = false;
  /** Seen a pong or a frame since the last ping. */
  alive = true;
  closeIntent: CloseIntent | null = null;
  registerTimer?: NodeJS.Timeout;
  /** Requests not yet taken up, in the order sent. */
  readonly queue: QueuedFrame[] = [];
  /** The requests of the queue are being worked through (see SyncServer#drain). */
  draining = false;
  /** Requests queued or being handled (answered ones no longer count). */
  private pending = 0;

  constructor(
    readonly ws: WebSocket,
    private readonly limits: SocketLimits,
    private readonly onSlowConsumer: (socket: SyncSocket) => void,
  ) {}

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends one frame; false when the socket is not open or was just closed as a slow consumer. */
  send(frame: SyncServerFrame): boolean {
    if (!this.open || this.closeIntent === 'slow') return false;
    // Encoded once: the length check and the frame use the same bytes.
    const data = Buffer.from(JSON.stringify(frame), 'utf8');
    if (this.ws.bufferedAmount + data.length > this.limits.maxSendBufferBytes) {
      this.onSlowConsumer(this);
      return false;
    }
    this.ws.send(data, { binary: false });
    return true;
  }

  sendResult(id: string | number, data: unknown): boolean {
    return this.send({ type: 'result', id, data });
  }

  sendError(id: string | number | null, error: SyncErrorBody): boolean {
    return this.send({ type: 'error', id, error });
  }

  sendPush(push: ServerPush): boolean {
    return this.send({ type: 'push', push });
  }

  close(code: number, reason: string, intent: CloseIntent): void {
    if (this.closeIntent === null) this.closeIntent = intent;
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      // The reason of a close frame is at most 123 bytes.
      this.ws.close(code, Buffer.from(reason, 'utf8').subarray(0, 123).toString('utf8').replace(/\uFFFD$/, ''));
    }
  }

  /** Queues a request behind the ones before it; false when the queue is full. */
  enqueue(frame: QueuedFrame): boolean {
    if (this.pending >= this.limits.maxPendingRequests) return false;
    this.pending++;
    this.queue.push(frame);
    return true;
  }

  /** A queued request was answered. */
  answered(): void {
    this.pending--;
  }

  /**
   * Runs `fn` (which sends frames) with the socket corked: the frames it sends leave in one write
   * instead of one each (the answers of a batch of requests).
   */
  corked<T>(fn: () => T): T {
    // ws keeps its net.Socket as `_socket`; without it, frames simply go out one by one.
    const raw = (this.ws as unknown as { _socket?: { cork?: () => void; uncork?: () => void } })._socket;
    if (typeof raw?.cork !== 'function' || typeof raw.uncork !== 'function') return fn();
    raw.cork();
    try {
      return fn();
    } finally {
      raw.uncork();
    }
  }
}
