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
import net from 'node:net';
import tls from 'node:tls';
import {
  CLOSED,
  CLOSING,
  CONNECTING,
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_MAX_PAYLOAD,
  encodeFrame,
  FrameReader,
  isValidCloseCode,
  MAX_HEAD_BYTES,
  OPCODES,
  OPEN,
  closePayload,
  randomPool,
  takeRandom,
  WebSocketProtocolError,
} from './frames.mjs';
import { acceptOf, checkHandshake } from './handshake.mjs';

export { encodeFrame, FrameReader, OPCODES, OPEN, WebSocketProtocolError } from './frames.mjs';
export { acceptOf, checkHandshake } from './handshake.mjs';

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
          onread: {
            buffer: readBuffer,
            callback: (n, buffer) => {
              this.onData(buffer.subarray(0, n), true);
            },
          },
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

  /** Sends a text message at the end of this tick, in one write with every frame sent until then. */
  sendInTick(text) {
    if (this.readyState !== OPEN) return false;
    if (this.batched === null) {
      this.batched = [];
      process.nextTick(() => this.flush());
    }
    this.batched.push(encodeFrame(OPCODES.text, text));
    return true;
  }

  /** Runs `fn`; the frames it sends leave in one write (one system call) at its end. */
  batch(fn) {
    if (this.batched !== null) return fn();
    this.batched = [];
    try {
      return fn();
    } finally {
      this.flush();
    }
  }

  flush() {
    const frames = this.batched;
    this.batched = null;
    if (frames?.length > 0 && !this.socket.destroyed)
      this.socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
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
