/**
 * Sending hostile requests as they are: node:http for paths and bodies fetch would normalise, and
 * raw node:net sockets where the server answers before reading what it refuses (413, 431) and a
 * client that keeps writing would see only the reset.
 */
import http from 'node:http';
import net from 'node:net';
import type { HostileRequest } from './corpus.js';

export interface HostileAnswer {
  status: number;
  contentType: string;
  correlationId: string | undefined;
  text: string;
  body: any;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

export function send(
  baseUrl: string,
  request: HostileRequest,
  extraHeaders: Record<string, string> = {},
): Promise<HostileAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        agent,
        headers: {
          ...extraHeaders,
          ...request.headers,
          ...(request.body === undefined ? {} : { 'content-length': Buffer.byteLength(request.body) }),
        },
        timeout: 20000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve(answerOf(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer within 20 s to ${request.method} ${request.path.slice(0, 120)}`)),
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

function answerOf(status: number, headers: Record<string, string | string[] | undefined>, text: string): HostileAnswer {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const header = (name: string) =>
    Array.isArray(headers[name]) ? (headers[name] as string[])[0] : (headers[name] as string | undefined);
  return { status, contentType: header('content-type') ?? '', correlationId: header('x-correlation-id'), text, body };
}

/**
 * Writes `head` (request line and headers, CRLF-terminated, without the blank line) and then
 * `bodyBytes` of body in 64 KiB chunks, stopping as soon as the server answers; resolves with the
 * answer read before any reset, or status 0 when the connection closed without one.
 */
export function sendRaw(baseUrl: string, head: string, bodyBytes = 0): Promise<HostileAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    const received: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(parseRawAnswer(Buffer.concat(received).toString('utf8')));
    };
    socket.setTimeout(15000, finish);
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      const text = Buffer.concat(received).toString('utf8');
      const headerEnd = text.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, headerEnd));
      if (!length || Buffer.byteLength(text.slice(headerEnd + 4)) >= Number(length[1])) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    const send = async () => {
      socket.write(`${head}\r\n`);
      // A server that refuses on the declared length answers before any body byte: give it the chance.
      if (bodyBytes > 0) await new Promise((r) => setTimeout(r, 300));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      for (let sent = 0; sent < bodyBytes && !settled && !socket.destroyed; sent += chunk.length) {
        if (!socket.write(chunk.subarray(0, Math.min(chunk.length, bodyBytes - sent))))
          await new Promise((r) => socket.once('drain', r).once('close', r));
      }
    };
    socket.on('connect', () => void send());
  });
}

function parseRawAnswer(text: string): HostileAnswer {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!match) return { status: 0, contentType: '', correlationId: undefined, text, body: undefined };
  const headerEnd = text.indexOf('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of text
    .slice(0, headerEnd < 0 ? text.length : headerEnd)
    .split('\r\n')
    .slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return answerOf(Number(match[1]), headers, headerEnd < 0 ? '' : text.slice(headerEnd + 4));
}

/** Runs `task` over `items`, `concurrency` at a time. */
export async function pool<T>(items: T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

export function closeAgent(): void {
  agent.destroy();
}
