import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How much of a refused request is read and thrown away before the connection is cut. Closing a
 * socket the client still writes to makes the kernel answer with a reset, and most clients then
 * lose the response already sent (a 413 among them): reading the rest lets them see it.
 */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
export const DRAIN_TIMEOUT_MS = 10_000;

/** Reads and discards what is left of a request body (nothing is kept); past the bounds, closes the connection. */
export function drainRequestBody(request: IncomingMessage): void {
  if (request.complete || request.destroyed) return;
  discard(request, () => request.socket?.destroy());
}

/** After a raw answer to a broken request: reads and discards until the client closes, within the bounds. */
export function drainSocket(socket: Socket): void {
  discard(socket, () => socket.destroy());
  socket.once('end', () => socket.destroy());
}

function discard(stream: IncomingMessage | Socket, cut: () => void): void {
  let discarded = 0;
  const timer = setTimeout(cut, DRAIN_TIMEOUT_MS);
  timer.unref();
  const stop = () => clearTimeout(timer);
  stream.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DRAIN_MAX_BYTES) {
      stop();
      cut();
    }
  });
  stream.once('end', stop);
  stream.once('close', stop);
  stream.resume();
}
