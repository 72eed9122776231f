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

    send(text) {
      this.transport.send(text);
    }

    close(code, reason) {
      this.transport.close(code, reason);
    }
  };
}

/**
 * The SDK client of simulated client `index`. No resume (a dropped socket ends the client, as a load
 * test wants to see) and no stats: its connections are plain requests, there is no media.
 */
export function simulatedClient({ url, index, requestTimeoutMs, onTransport }) {
  return new Client({
    url,
    WebSocket: leanWebSocketClass({ handshakeTimeoutMs: requestTimeoutMs, onTransport }),
    requestTimeoutMs,
    reconnect: false,
    statsIntervalMs: 0,
    userAlias: `Simulated ${index}`,
    deviceAlias: 'simulator',
    tag: 'simulator',
  });
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
