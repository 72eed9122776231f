// A lean RFC 6455 WebSocket client on node:net (node:tls for wss:), for the simulator.
//
// Why not the `ws` client: it builds its upgrade request with node:http (ClientRequest, header
// validation, an HTTP parser) and moves every byte through stream objects, which made the
// simulator, running on the machine it measures, cost more CPU per client than the server it
// drives. This client is still a genuine one: one TCP connection per client, an HTTP/1.1 upgrade
// whose Sec-WebSocket-Accept is verified, masked client frames, every server frame parsed
// (7/16/64-bit lengths, fragmented messages, ping answered with pong, close handshake), protocol
// errors failing the connection with the RFC's close codes. No extensions and no subprotocols are
// offered, so a server answering with either is refused.
import { isUtf8 } from 'node:buffer';
import crypto from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
export const OPCODES = Object.freeze({ continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa });
export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;
export const CLOSED = 3;
/** The largest message accepted (as `ws`'s default maxPayload); beyond it the connection fails with 1009. */
const DEFAULT_MAX_PAYLOAD = 100 * 1024 * 1024;
const MAX_HEAD_BYTES = 16 * 1024;
const DEFAULT_CLOSE_TIMEOUT_MS = 30000;

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
const randomPool = Buffer.allocUnsafe(8192);
let randomOffset = randomPool.length;
/** Offset in `randomPool` of `n` fresh random bytes (valid until the next call). */
function takeRandom(n) {
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
export function encodeFrame(opcode, payload, fin = true, maskKey = undefined) {
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
function closePayload(code, reason) {
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

/** Sec-WebSocket-Accept for a key (RFC 6455 section 4.2.2). */
export function acceptOf(key) {
  // crypto.hash: the one-shot form (Node >= 20.12), cheaper than a Hash object.
  return crypto.hash
    ? crypto.hash('sha1', key + ACCEPT_GUID, 'base64')
    : crypto
        .createHash('sha1')
        .update(key + ACCEPT_GUID)
        .digest('base64');
}

/**
 * The handshake answer `head` (status line and headers, without the blank line) checked against
 * RFC 6455 section 4.1: 101, `Upgrade: websocket`, `Connection: Upgrade`, the expected
 * Sec-WebSocket-Accept, no extension nor subprotocol (none was offered). Returns an Error or null.
 */
export function checkHandshake(head, expectedAccept) {
  let lineEnd = head.indexOf('\r\n');
  if (lineEnd < 0) lineEnd = head.length;
  const statusLine = head.slice(0, lineEnd);
  if (!/^HTTP\/1\.1 \d{3}( |$)/.test(statusLine))
    return new Error(`not an HTTP/1.1 answer: ${statusLine.slice(0, 100)}`);
  if (!statusLine.startsWith('101', 9)) return new Error(`upgrade refused: HTTP ${statusLine.slice(9, 12)}`);
  let upgrade = false;
  let connection = false;
  let accept = null;
  while (lineEnd < head.length) {
    const start = lineEnd + 2;
    lineEnd = head.indexOf('\r\n', start);
    if (lineEnd < 0) lineEnd = head.length;
    const colon = head.indexOf(':', start);
    if (colon <= start || colon > lineEnd) return new Error('a malformed header line in the handshake answer');
    const name = head.slice(start, colon).trim().toLowerCase();
    const value = head.slice(colon + 1, lineEnd).trim();
    if (name === 'upgrade') upgrade = value.toLowerCase() === 'websocket';
    else if (name === 'connection')
      connection ||= value.split(',').some((token) => token.trim().toLowerCase() === 'upgrade');
    else if (name === 'sec-websocket-accept') accept = accept === null ? value : 'repeated';
    else if (name === 'sec-websocket-extensions')
      return new Error('the server chose an extension that was not offered');
    else if (name === 'sec-websocket-protocol') return new Error('the server chose a subprotocol that was not offered');
  }
  if (!upgrade) return new Error('invalid Upgrade header in the handshake answer');
  if (!connection) return new Error('invalid Connection header in the handshake answer');
  if (accept !== expectedAccept) return new Error('invalid Sec-WebSocket-Accept header in the handshake answer');
  return null;
}

/** The last URL parsed: a simulation opens every client socket to the same one. */
let lastUrl = { text: '', url: null };
function parseUrl(url) {
  const text = String(url);
  if (lastUrl.text !== text) lastUrl = { text, url: new URL(text) };
  return lastUrl.url;
}

// Every plain socket reads into this one buffer (net's `onread`): a read is handled at once and
// what is kept of it is copied, so sockets need no buffer of their own and no stream machinery.
const readBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * One client connection. Connects at construction; `onopen()` after a verified handshake,
 * `onmessage(text, isBinary)` per message (binary ones decoded as UTF-8 too), `onerror(error)` for
 * a failed handshake, a socket error or a protocol violation, `onclose(code, reason)` once at the
 * end (1006 when no close frame was received, 1005 when it had no code).
 */
export class WebSocketClient {
  /**
   * @param {string | URL} url
   * @param {{ handshakeTimeoutMs?: number; closeTimeoutMs?: number; maxPayload?: number; tls?:
   * import('node:tls').ConnectionOptions }} [options]
   *   `tls`: options of `tls.connect` for wss: (e.g. `ca`).
   */
  constructor(
    url,
    {
      handshakeTimeoutMs = 10000,
      closeTimeoutMs = DEFAULT_CLOSE_TIMEOUT_MS,
      maxPayload = DEFAULT_MAX_PAYLOAD,
      tls: tlsOptions,
    } = {},
  ) {
    const target = parseUrl(url);
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:')
      throw new SyntaxError(`not a ws: or wss: URL: ${target}`);
    const secure = target.protocol === 'wss:';
    this.readyState = CONNECTING;
    this.onopen = null;
    this.onmessage = null;
    this.onerror = null;
    this.onclose = null;
    this.closeTimeoutMs = closeTimeoutMs;
    this.closeFrameSent = false;
    /** Code and reason of the server's close frame, once received. */
    this.received = null;
    /** The first error seen (failed handshake, socket error, protocol violation). */
    this.error = null;
    /** Frames sent inside `batch`, written together at its end. */
    this.batched = null;
    this.closeTimer = null;
    this.head = null;
    this.reader = new FrameReader(this, maxPayload);
    const keyAt = takeRandom(16);
    const key = randomPool.toString('base64', keyAt, keyAt + 16);
    this.expectedAccept = acceptOf(key);
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    const port = Number(target.port) || (secure ? 443 : 80);
    this.socket = secure
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ...tlsOptions })
      : net.connect({
          host,
          port,
          onread: { buffer: readBuffer, callback: (n, buffer) => void this.onData(buffer.subarray(0, n), true) },
        });
    if (secure) this.socket.on('data', (chunk) => this.onData(chunk, false));
    this.socket.setNoDelay(true);
    this.socket.on('error', (error) => this.emitError(error));
    this.socket.on('close', () => this.onSocketClose());
    // Written at once: net queues it until the connection is made.
    this.socket.write(
      `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`,
      'latin1',
    );
    this.handshakeTimer = setTimeout(
      () => this.abortHandshake(new Error('opening handshake has timed out')),
      handshakeTimeoutMs,
    );
  }

  onData(chunk, transient) {
    try {
      if (this.readyState === CONNECTING) return this.readHandshake(chunk, transient);
      this.reader.push(chunk, transient);
    } catch (error) {
      if (error instanceof WebSocketProtocolError) this.fail(error);
      else throw error;
    }
  }

  readHandshake(chunk, transient) {
    const data = this.head === null ? chunk : Buffer.concat([this.head, chunk]);
    const end = data.indexOf('\r\n\r\n', 0, 'latin1');
    if (end < 0) {
      if (data.length > MAX_HEAD_BYTES) return this.abortHandshake(new Error('handshake answer headers too large'));
      this.head = transient && data === chunk ? Buffer.from(chunk) : data;
      return;
    }
    this.head = null;
    const refused = checkHandshake(data.toString('latin1', 0, end), this.expectedAccept);
    if (refused) return this.abortHandshake(refused);
    clearTimeout(this.handshakeTimer);
    this.readyState = OPEN;
    this.onopen?.();
    // Frames that came with the answer.
    if (end + 4 < data.length) this.reader.push(data.subarray(end + 4), transient && data === chunk);
  }

  abortHandshake(error) {
    if (this.readyState !== CONNECTING) return;
    clearTimeout(this.handshakeTimer);
    this.readyState = CLOSING;
    this.emitError(error);
    this.socket.destroy();
  }

  emitError(error) {
    if (this.readyState === CONNECTING) return this.abortHandshake(error);
    this.error ??= error;
    this.onerror?.(error);
  }

  /** Sends a text message; false when the connection is not open. */
  send(text) {
    if (this.readyState !== OPEN) return false;
    this.write(encodeFrame(OPCODES.text, text));
    return true;
  }

  write(frame) {
    if (this.batched !== null) this.batched.push(frame);
    else this.socket.write(frame);
  }

  /** Runs `fn`; the frames it sends leave in one write (one system call) at its end. */
  batch(fn) {
    if (this.batched !== null) return fn();
    this.batched = [];
    try {
      return fn();
    } finally {
      const frames = this.batched;
      this.batched = null;
      if (frames.length > 0 && !this.socket.destroyed)
        this.socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    }
  }

  /** Starts the close handshake (or aborts a connection still connecting). */
  close(code = 1000, reason = '') {
    if (code !== undefined && !isValidCloseCode(code)) throw new RangeError(`invalid close code ${code}`);
    if (Buffer.byteLength(reason) > 123) throw new RangeError('a close reason longer than 123 bytes');
    if (this.readyState === CONNECTING)
      return this.abortHandshake(new Error('closed before the connection was established'));
    if (this.readyState !== OPEN) return;
    this.readyState = CLOSING;
    this.sendClose(code, reason);
    // The server answers with its close frame and then closes the TCP connection; not forever.
    this.closeTimer = setTimeout(() => this.socket.destroy(), this.closeTimeoutMs).unref();
  }

  sendClose(code, reason = '') {
    if (this.closeFrameSent) return;
    this.closeFrameSent = true;
    this.write(encodeFrame(OPCODES.close, closePayload(code, reason)));
  }

  /** Drops the connection at once, without a close handshake. */
  terminate() {
    if (this.readyState === CLOSED) return;
    clearTimeout(this.handshakeTimer);
    if (this.readyState === CONNECTING)
      return this.abortHandshake(new Error('terminated before the connection was established'));
    this.readyState = CLOSING;
    this.socket.destroy();
  }

  /** A protocol violation: close frame with its code, then the TCP connection ends (RFC 6455 section 7.1.7). */
  fail(error) {
    this.reader.done = true;
    this.emitError(error);
    if (this.readyState === OPEN) this.readyState = CLOSING;
    if (!this.socket.destroyed) {
      this.sendClose(error.closeCode);
      this.socket.end();
      this.closeTimer ??= setTimeout(() => this.socket.destroy(), this.closeTimeoutMs).unref();
    }
  }

  // FrameReader handler ---------------------------------------------------------------------

  message(data, isBinary) {
    this.onmessage?.(data.toString('utf8'), isBinary);
  }

  ping(payload) {
    if (!this.closeFrameSent) this.write(encodeFrame(OPCODES.pong, payload));
  }

  pong() {}

  closeFrame(code, reason) {
    this.received = { code, reason };
    this.readyState = CLOSING;
    // Echo the code (RFC 6455 section 5.5.1), then end our side; the server closes the TCP connection.
    this.sendClose(code === 1005 ? undefined : code);
    this.socket.end();
    this.closeTimer ??= setTimeout(() => this.socket.destroy(), this.closeTimeoutMs).unref();
  }

  onSocketClose() {
    if (this.readyState === CLOSED) return;
    clearTimeout(this.handshakeTimer);
    clearTimeout(this.closeTimer);
    if (this.readyState === CONNECTING) this.emitError(new Error('the connection closed before the handshake answer'));
    this.readyState = CLOSED;
    this.onclose?.(this.received?.code ?? 1006, this.received?.reason ?? '');
  }
}
