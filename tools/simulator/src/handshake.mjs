// The opening handshake of RFC 6455 section 4, as the client checks the server's answer.
import crypto from 'node:crypto';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

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
