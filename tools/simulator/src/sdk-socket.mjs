// The simulator's clients are SDK `Client`s (@switchboard/client) over the lean RFC 6455 client of
// websocket.mjs, put behind the browser WebSocket interface the SDK takes (its `WebSocket` option):
// one real TCP connection per simulated client, still cheap at thousands of clients.
import { Client } from '@switchboard/client';
import { WebSocketClient } from './websocket.mjs';

/**
 * A WebSocket class for one SDK client: `onTransport(transport)` sees each lean socket it opens
 * (for its real close code, and `batch` to send pipelined requests in one write).
 * @param {{ handshakeTimeoutMs?: number; onTransport?: (transport: WebSocketClient) => void }} options
 */
export function leanWebSocketClass({ handshakeTimeoutMs = 10000, onTransport } = {}) {
  return class LeanWebSocket {
    constructor(url) {
      this.onopen = null;
      this.onmessage = null;
      this.onclose = null;
      this.onerror = null;
      const transport = (this.transport = new WebSocketClient(url, { handshakeTimeoutMs }));
      transport.onopen = () => this.onopen?.({});
      transport.onmessage = (text) => this.onmessage?.({ data: text });
      transport.onerror = (error) => this.onerror?.({ error });
      transport.onclose = (code, reason) => this.onclose?.({ code, reason });
      onTransport?.(transport);
    }

    get readyState() {
      return this.transport.readyState;
    }

    /** The frames the SDK sends in one tick (a register and its pipelined requests) leave in one write. */
    send(text) {
      this.transport.sendInTick(text);
    }

    close(code, reason) {
      this.transport.close(code, reason);
    }
  };
}

/**
 * Makes the SDK clients of a simulation. One WebSocket class for all of them (a class per client
 * would make the SDK's calls on its socket megamorphic): the socket opened inside `register(client,
 * token)` is handed to `onTransport(owner, transport)`; the SDK opens it synchronously there (a
 * token is given, and without `getToken` nor resume it opens no other).
 */
export class SimulatedClients {
  constructor({ url, requestTimeoutMs, onTransport }) {
    this.url = url;
    this.requestTimeoutMs = requestTimeoutMs;
    this.owner = null;
    this.WebSocket = leanWebSocketClass({
      handshakeTimeoutMs: requestTimeoutMs,
      onTransport: (transport) => {
        if (this.owner === null) throw new Error('simulator: a socket was opened outside register');
        onTransport(this.owner, transport);
      },
    });
  }

  /** The SDK client of simulated client `index`: no resume (a dropped socket ends it), no stats (no media). */
  create(index) {
    return new Client({
      url: this.url,
      WebSocket: this.WebSocket,
      requestTimeoutMs: this.requestTimeoutMs,
      reconnect: false,
      statsIntervalMs: 0,
      userAlias: `Simulated ${index}`,
      deviceAlias: 'simulator',
      tag: 'simulator',
    });
  }

  /** `session.register(token, { pipelined })`, its socket handed to `onTransport(owner, ...)`. */
  register(owner, session, token, pipelined) {
    this.owner = owner;
    try {
      return session.register(token, { pipelined });
    } finally {
      this.owner = null;
    }
  }
}

/**
 * Watches a lean socket: `opened(ms)` once its handshake is done, `closed(code)` with the code the
 * gateway sent (the SDK may have closed first). Resolves once the socket is closed.
 */
export function watchTransport(transport, { opened, closed }) {
  const startedAt = performance.now();
  const { onopen, onclose } = transport;
  transport.onopen = () => {
    opened(performance.now() - startedAt);
    onopen();
  };
  return new Promise((resolve) => {
    transport.onclose = (code, reason) => {
      closed(code);
      onclose(code, reason);
      resolve();
    };
  });
}
