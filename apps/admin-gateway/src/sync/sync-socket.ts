import type { SyncErrorBody, ServerPush, SyncRequestType, SyncServerFrame } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import * as wsModule from 'ws';
import type { ClientSession } from './client-session.js';
import type { DomainError } from '@switchboard/contracts';

/** ws' framing (a named export of ws, missing from @types/ws): the bytes of one unmasked frame. */
const { Sender } = wsModule as unknown as {
  Sender: {
    frame(
      data: Buffer,
      options: { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean },
    ): Buffer[];
  };
};
const TEXT_FRAME = { fin: true, rsv1: false, opcode: 0x1, mask: false, readOnly: false };

/** ws keeps its net.Socket as `_socket`. */
type RawSocket = { write(data: Buffer): boolean };

function rawSocketOf(ws: WebSocket): RawSocket | undefined {
  const raw = (ws as unknown as { _socket?: Partial<RawSocket> })._socket;
  return typeof raw?.write === 'function' ? (raw as RawSocket) : undefined;
}

/** A request frame waiting for its turn (or for its answer) on a socket. */
export interface RequestFrame {
  id: string | number;
  type: SyncRequestType;
  data: unknown;
  /** Size of the frame as received. */
  bytes: number;
  refusal?: undefined;
}

/**
 * A frame refused as it was read (not a request, or data the schema refuses) while requests sent
 * before it wait: its error frame waits for their answers (answers keep the order of the frames).
 */
export interface RefusedFrame {
  id: string | number | null;
  /** The request type (`invalid`: not a request frame; null: not JSON), for the metrics. */
  type: SyncRequestType | 'invalid' | null;
  refusal: DomainError;
  bytes?: undefined;
}

export type QueuedFrame = RequestFrame | RefusedFrame;

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
  private socketId?: string;
  session: ClientSession | null = null;
  /** A register request is being handled. */
  registering = false;
  /** Pushes are delivered only once the register result went out (they are kept until then). */
  ready = false;
  /** Seen a pong or a frame since the last ping. */
  alive = true;
  closeIntent: CloseIntent | null = null;
  /** Requests not yet taken up, in the order sent. */
  readonly queue: QueuedFrame[] = [];
  /** The requests of the queue are being worked through (see SyncServer#drain). */
  draining = false;
  /** Requests queued or being handled (answered ones no longer count). */
  private pending = 0;
  /** The frames sent inside `corked`, written together when it ends (null outside). */
  private outbox: Buffer[] | null = null;
  private outboxBytes = 0;

  constructor(
    readonly ws: WebSocket,
    private readonly limits: SocketLimits,
    private readonly onSlowConsumer: (socket: SyncSocket) => void,
  ) {}

  /** For logs only: made on first use. */
  get id(): string {
    return (this.socketId ??= randomUUID());
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends one frame; false when the socket is not open or was just closed as a slow consumer. */
  send(frame: SyncServerFrame): boolean {
    if (!this.open || this.closeIntent === 'slow') return false;
    // Encoded once: the length check and the frame use the same bytes.
    const data = Buffer.from(JSON.stringify(frame), 'utf8');
    if (this.ws.bufferedAmount + this.outboxBytes + data.length > this.limits.maxSendBufferBytes) {
      this.onSlowConsumer(this);
      return false;
    }
    if (this.outbox) {
      this.outbox.push(data);
      this.outboxBytes += data.length;
    } else this.ws.send(data, { binary: false });
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
    // The frames answered before the close go out before the close frame.
    this.flush();
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      // The reason of a close frame is at most 123 bytes.
      this.ws.close(
        code,
        Buffer.from(reason, 'utf8')
          .subarray(0, 123)
          .toString('utf8')
          .replace(/\uFFFD$/, ''),
      );
    }
  }

  /** Requests queued or being handled: a refusal read now must wait for their answers. */
  get busy(): boolean {
    return this.pending > 0;
  }

  /** Queues a request (or a refusal) behind the ones before it; false when the queue is full. */
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
   * Runs `fn` (which sends frames) with the frames it sends kept back, then writes them in one
   * write (the answers of a batch of requests): one buffer instead of two ws writes per frame.
   */
  corked<T>(fn: () => T): T {
    if (this.outbox) return fn();
    this.outbox = [];
    try {
      return fn();
    } finally {
      this.flush();
    }
  }

  /**
   * Writes the frames kept back by `corked`. Straight to the net.Socket, as ws would write them:
   * with permessage-deflate off ws writes every frame at once (it queues nothing), so a write of
   * our own keeps the order of the frames, pings and close frames on the socket.
   */
  private flush(): void {
    const frames = this.outbox;
    if (!frames) return;
    this.outbox = null;
    this.outboxBytes = 0;
    if (frames.length === 0 || !this.open) return;
    const raw = rawSocketOf(this.ws);
    if (!raw || frames.length === 1) {
      for (const data of frames) this.ws.send(data, { binary: false });
      return;
    }
    const parts: Buffer[] = [];
    let total = 0;
    for (const data of frames) {
      for (const part of Sender.frame(data, TEXT_FRAME)) {
        parts.push(part);
        total += part.length;
      }
    }
    raw.write(Buffer.concat(parts, total));
  }
}
