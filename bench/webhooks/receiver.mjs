// The bench's webhook receiver: the customer's server, which in production runs on another
// machine. Here it shares the cores with the pipeline, so what it spends per request comes out of
// the deliveries measured (see README, "The receiver").
//
// - `lean` (the default): HTTP/1.1 on a bare TCP socket. It reads each request's head and its
//   `content-length` body, hands the body to `onBody`, and answers `200` with an empty body (on
//   keep-alive connections; pipelined requests are answered in order, in one write per read). A
//   request without `content-length` gets 411 and the connection is closed; a head over 16 KiB,
//   400. The counterpart of the raw BullMQ round's processor, which does nothing.
// - `node`: node:http's server (what earlier figures used).
//
// `onBody(text, at)` gets each request's body (utf-8) and the time it was read.
import http from 'node:http';
import net from 'node:net';

const OK = 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\nkeep-alive: timeout=60\r\n\r\n';
const MAX_HEAD = 16 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

/** The value of `content-length` in a request head (latin1), or -1 when it has none (or an invalid one). */
export function contentLength(head) {
  const m = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i.exec(head);
  return m ? Number(m[1]) : -1;
}

function leanServer(delayMs, onBody) {
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    let pending = null;
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => {
      let buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      let answers = 0;
      for (;;) {
        const headEnd = buf.indexOf(CRLFCRLF);
        if (headEnd < 0) {
          if (buf.length > MAX_HEAD)
            return void socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
          break;
        }
        const length = contentLength(buf.toString('latin1', 0, headEnd));
        if (length < 0)
          return void socket.end('HTTP/1.1 411 Length Required\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
        const end = headEnd + 4 + length;
        if (buf.length < end) break;
        onBody(buf.toString('utf8', headEnd + 4, end), Date.now());
        answers++;
        buf = buf.subarray(end);
      }
      pending = buf.length > 0 ? buf : null;
      if (answers === 0) return;
      const reply = answers === 1 ? OK : OK.repeat(answers);
      if (delayMs > 0) setTimeout(() => socket.writable && socket.write(reply), delayMs);
      else socket.write(reply);
    });
  });
}

function nodeServer(delayMs, onBody) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      onBody(Buffer.concat(chunks).toString('utf8'), Date.now());
      const answer = () => {
        res.writeHead(200);
        res.end();
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

/** Starts a receiver on 127.0.0.1 (a free port): `{ url, close }`. */
export async function startReceiver({ kind = 'lean', delayMs = 0, onBody }) {
  if (kind !== 'lean' && kind !== 'node') throw new Error(`unknown receiver ${kind} (lean or node)`);
  const server = kind === 'lean' ? leanServer(delayMs, onBody) : nodeServer(delayMs, onBody);
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
