// RFC 6455 framing: encoding client frames and reading server frames, with the RFC's close codes.
import { isUtf8 } from 'node:buffer';
import crypto from 'node:crypto';

export const OPCODES = Object.freeze({ continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa });
export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;
export const CLOSED = 3;
/** The largest message accepted (as `ws`'s default maxPayload); beyond it the connection fails with 1009. */
export const DEFAULT_MAX_PAYLOAD = 100 * 1024 * 1024;
export const MAX_HEAD_BYTES = 16 * 1024;
export const DEFAULT_CLOSE_TIMEOUT_MS = 30000;

/** A violation of the protocol by the server: the connection fails with `closeCode`. */
export class WebSocketProtocolError extends Error {
  constructor(closeCode, message) {
    super(message);
    this.name = 'WebSocketProtocolError';
    this.closeCode = closeCode;
  }
}

// Keys and masks come from a pool of random bytes refilled 8 KiB at a time (one randomFillSync per
// ~2000 frames instead of one per frame).
export const randomPool = Buffer.allocUnsafe(8192);
let randomOffset = randomPool.length;
/** Offset in `randomPool` of `n` fresh random bytes (valid until the next call). */
export function takeRandom(n) {
  if (randomOffset + n > randomPool.length) {
    crypto.randomFillSync(randomPool);
    randomOffset = 0;
  }
  randomOffset += n;
  return randomOffset - n;
}

/** Close codes a peer may put in a close frame (RFC 6455 section 7.4; 1004-1006 and 1015 are never sent). */
export function isValidCloseCode(code) {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
  );
}

/**
 * One frame. `payload` is a string (written as UTF-8) or a Buffer. `maskKey`: a 4-byte Buffer, or
 * `undefined` for a random one (what a client sends), or `null` for an unmasked frame (what a
 * server sends; tests use it to play the server).
 */
export function encodeFrame(opcode, payload, fin = true, maskKey) {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const masked = maskKey !== null;
  const headerLength = 2 + lengthBytes + (masked ? 4 : 0);
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = (fin ? 0x80 : 0) | opcode;
  frame[1] = (masked ? 0x80 : 0) | (lengthBytes === 0 ? length : lengthBytes === 2 ? 126 : 127);
  if (lengthBytes === 2) frame.writeUInt16BE(length, 2);
  else if (lengthBytes === 8) {
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  if (typeof payload === 'string') frame.write(payload, headerLength, 'utf8');
  else payload.copy(frame, headerLength);
  if (masked) {
    const keyAt = headerLength - 4;
    if (maskKey === undefined) randomPool.copy(frame, keyAt, takeRandom(4), randomOffset);
    else maskKey.copy(frame, keyAt, 0, 4);
    applyMask(frame, headerLength, frame, keyAt);
  }
  return frame;
}

/** XORs `buffer[from..]` with the 4-byte key at `key[keyAt]` (masking and unmasking are the same). */
export function applyMask(buffer, from, key, keyAt) {
  const k0 = key[keyAt];
  const k1 = key[keyAt + 1];
  const k2 = key[keyAt + 2];
  const k3 = key[keyAt + 3];
  const end = buffer.length;
  let i = from;
  for (; i + 3 < end; i += 4) {
    buffer[i] ^= k0;
    buffer[i + 1] ^= k1;
    buffer[i + 2] ^= k2;
    buffer[i + 3] ^= k3;
  }
  for (let j = 0; i < end; i++, j++) buffer[i] ^= key[keyAt + j];
}

/** The payload of a close frame: the code (big-endian) and the reason (UTF-8, at most 123 bytes). */
export function closePayload(code, reason) {
  if (code === undefined) return Buffer.alloc(0);
  const payload = Buffer.allocUnsafe(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2, 'utf8');
  return payload;
}

/**
 * Parses the frames a server sends, fed with chunks as they arrive. Calls `handler.message(data,
 * isBinary)` for each whole message (fragments joined), `handler.ping(payload)`,
 * `handler.pong(payload)` and `handler.closeFrame(code, reason)`; after a close frame it reads nothing
 * more. Throws WebSocketProtocolError on a violation. Buffers handed to the handler may be views of
 * a chunk that is reused after `push` returns (see `transient`): use them at once.
 */
export class FrameReader {
  constructor(handler, maxPayload = DEFAULT_MAX_PAYLOAD) {
    this.handler = handler;
    this.maxPayload = maxPayload;
    /** Received bytes not parsed yet. */
    this.chunks = [];
    this.buffered = 0;
    /** The frame whose payload is awaited, or null while awaiting a header. */
    this.frame = null;
    /** Opcode and parts of a fragmented message in progress. */
    this.messageOpcode = 0;
    this.fragments = [];
    this.fragmentedLength = 0;
    this.done = false;
  }

  /** `transient`: `chunk` is reused by the caller afterwards, so what is kept of it is copied. */
  push(chunk, transient = false) {
    if (this.done || chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.done && (this.frame === null ? this.readHeader() : this.readPayload()));
    if (this.done) {
      this.chunks = [];
      this.buffered = 0;
    } else if (transient && this.chunks.length > 0) {
      // Only the last chunk (or what is left of it) can be a view of the caller's buffer.
      const last = this.chunks.length - 1;
      this.chunks[last] = Buffer.from(this.chunks[last]);
    }
  }

  /** The first `n` buffered bytes, without consuming them (a copy only when they span chunks). */
  peek(n) {
    const first = this.chunks[0];
    if (first.length >= n) return first;
    return Buffer.concat(this.chunks, n);
  }

  /** Consumes `n` buffered bytes: a view when they lie in one chunk, else a copy. */
  take(n) {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first.length === n) {
      this.chunks.shift();
      return first;
    }
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    while (at < n) {
      const chunk = this.chunks[0];
      const part = Math.min(chunk.length, n - at);
      chunk.copy(out, at, 0, part);
      at += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    return out;
  }

  readHeader() {
    if (this.buffered < 2) return false;
    let head = this.peek(2);
    const fin = (head[0] & 0x80) !== 0;
    const opcode = head[0] & 0x0f;
    if ((head[0] & 0x70) !== 0) throw new WebSocketProtocolError(1002, 'RSV bits set without a negotiated extension');
    if ((head[1] & 0x80) !== 0) throw new WebSocketProtocolError(1002, 'a server frame is masked');
    const control = opcode >= 0x8;
    if (control) {
      if (opcode > 0xa) throw new WebSocketProtocolError(1002, `unknown opcode ${opcode}`);
      if (!fin) throw new WebSocketProtocolError(1002, 'a fragmented control frame');
    } else if (opcode > 0x2) throw new WebSocketProtocolError(1002, `unknown opcode ${opcode}`);
    else if (opcode === 0x0 && this.messageOpcode === 0)
      throw new WebSocketProtocolError(1002, 'a continuation frame without a message to continue');
    else if (opcode !== 0x0 && this.messageOpcode !== 0)
      throw new WebSocketProtocolError(1002, 'a new message inside a fragmented one');
    let length = head[1] & 0x7f;
    const extra = length === 126 ? 2 : length === 127 ? 8 : 0;
    if (control && extra !== 0) throw new WebSocketProtocolError(1002, 'a control frame longer than 125 bytes');
    if (this.buffered < 2 + extra) return false;
    if (extra === 2) length = this.peek(4).readUInt16BE(2);
    else if (extra === 8) {
      head = this.peek(10);
      const high = head.readUInt32BE(2);
      // Above 2^53 - 1 the length is not a safe integer (and far beyond any limit).
      if (high > 0x1fffff) throw new WebSocketProtocolError(1009, 'a frame length beyond 2^53 - 1');
      length = high * 2 ** 32 + head.readUInt32BE(6);
    }
    if (!control && this.fragmentedLength + length > this.maxPayload)
      throw new WebSocketProtocolError(1009, `a message larger than ${this.maxPayload} bytes`);
    this.take(2 + extra);
    this.frame = { fin, opcode, length };
    return true;
  }

  readPayload() {
    const { fin, opcode, length } = this.frame;
    if (this.buffered < length) return false;
    const payload = length === 0 ? Buffer.alloc(0) : this.take(length);
    this.frame = null;
    if (opcode === OPCODES.ping) this.handler.ping(payload);
    else if (opcode === OPCODES.pong) this.handler.pong(payload);
    else if (opcode === OPCODES.close) this.readClose(payload);
    else if (fin && this.messageOpcode === 0) this.deliver(opcode, payload);
    else {
      if (opcode !== OPCODES.continuation) this.messageOpcode = opcode;
      // A copy: the payload may be a view of a transient chunk and is kept past this push.
      this.fragments.push(Buffer.from(payload));
      this.fragmentedLength += length;
      if (fin) {
        const message = Buffer.concat(this.fragments, this.fragmentedLength);
        const messageOpcode = this.messageOpcode;
        this.fragments = [];
        this.fragmentedLength = 0;
        this.messageOpcode = 0;
        this.deliver(messageOpcode, message);
      }
    }
    return true;
  }

  deliver(opcode, data) {
    if (opcode === OPCODES.text && !isUtf8(data))
      throw new WebSocketProtocolError(1007, 'a text message that is not UTF-8');
    this.handler.message(data, opcode === OPCODES.binary);
  }

  readClose(payload) {
    this.done = true;
    if (payload.length === 0) return this.handler.closeFrame(1005, '');
    if (payload.length === 1) throw new WebSocketProtocolError(1002, 'a close frame with a 1-byte payload');
    const code = payload.readUInt16BE(0);
    if (!isValidCloseCode(code)) throw new WebSocketProtocolError(1002, `an invalid close code ${code}`);
    const reason = payload.subarray(2);
    if (!isUtf8(reason)) throw new WebSocketProtocolError(1007, 'a close reason that is not UTF-8');
    this.handler.closeFrame(code, reason.toString('utf8'));
  }
}
