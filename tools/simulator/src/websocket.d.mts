// Types of the simulator's lean RFC 6455 client (websocket.mjs).
/// <reference types="node" />

export declare const OPCODES: Readonly<{ continuation: 0; text: 1; binary: 2; close: 8; ping: 9; pong: 10 }>;
export declare const OPEN: 1;

export declare class WebSocketProtocolError extends Error {
  constructor(closeCode: number, message: string);
  readonly closeCode: number;
}

/** `maskKey`: 4 bytes, `undefined` for a random key (client frames), `null` for an unmasked frame (server frames). */
export declare function encodeFrame(
  opcode: number,
  payload: string | Buffer,
  fin?: boolean,
  maskKey?: Buffer | null,
): Buffer;
export declare function acceptOf(key: string): string;
export declare function checkHandshake(head: string, expectedAccept: string): Error | null;

export interface FrameHandler {
  message(data: Buffer, isBinary: boolean): void;
  ping(payload: Buffer): void;
  pong(payload: Buffer): void;
  closeFrame(code: number, reason: string): void;
}

export declare class FrameReader {
  constructor(handler: FrameHandler, maxPayload?: number);
  done: boolean;
  push(chunk: Buffer, transient?: boolean): void;
}

export declare class WebSocketClient {
  /** `tls`: options of `tls.connect` for wss: URLs (e.g. `ca`). */
  constructor(
    url: string | URL,
    options?: {
      handshakeTimeoutMs?: number;
      closeTimeoutMs?: number;
      maxPayload?: number;
      tls?: import('node:tls').ConnectionOptions;
    },
  );
  readonly readyState: 0 | 1 | 2 | 3;
  readonly socket: import('node:net').Socket;
  /** The first error seen (failed handshake, socket error, protocol violation), if any. */
  readonly error: Error | null;
  onopen: (() => void) | null;
  onmessage: ((text: string, isBinary: boolean) => void) | null;
  onerror: ((error: Error) => void) | null;
  onclose: ((code: number, reason: string) => void) | null;
  send(text: string): boolean;
  /** Sends at the end of this tick, in one write with every frame sent until then. */
  sendInTick(text: string): boolean;
  batch<T>(fn: () => T): T;
  close(code?: number, reason?: string): void;
  terminate(): void;
}
