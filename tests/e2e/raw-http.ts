/**
 * HTTP/1.1 over a bare TCP socket, for what fetch cannot send or see: a 16 KB request line, a body
 * streamed after its answer came, a connection reset. Answers are parsed as they arrive.
 */
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
}

export class RawConnection {
  /** The socket error (ECONNRESET, EPIPE, ...) and whether an answer had been read before it. */
  error: { code: string; afterAnswers: number } | null = null;
  closed = false;
  private buffer = Buffer.alloc(0);
  private readonly answers: RawAnswer[] = [];
  private waiting: (() => void) | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      this.error ??= { code: e.code ?? e.message, afterAnswers: this.answers.length };
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawConnection(socket);
  }

  /**
   * Writes the request line and headers (with `Host`, and `Content-Length` of `body` unless set), then `body` if given.
   */
  async send(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string | Buffer,
  ): Promise<void> {
    if (body !== undefined && !('content-length' in headers) && !('transfer-encoding' in headers))
      headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const lines = [
      `${method} ${path} HTTP/1.1`,
      'host: 127.0.0.1',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    await this.write(
      Buffer.concat([
        Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'),
        body === undefined ? Buffer.alloc(0) : Buffer.from(body),
      ]),
    );
  }

  /**
   * Streams `size` bytes of body in 64 KiB pieces a few ms apart (chunked encoding if asked); stops when the socket is
   * gone.
   */
  async streamBody(size: number, options: { chunked?: boolean; pauseMs?: number } = {}): Promise<number> {
    const piece = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    while (sent < size && !this.socket.destroyed && !this.error) {
      await this.write(
        options.chunked
          ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
          : piece,
      );
      sent += piece.length;
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 2));
    }
    if (options.chunked && !this.socket.destroyed && !this.error) await this.write(Buffer.from('0\r\n\r\n'));
    return sent;
  }

  /** The next answer on this connection (undefined when the socket closed without one). */
  async answer(timeoutMs = 15000): Promise<RawAnswer | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.answers.length === 0 && !this.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.answers.shift();
  }

  close(): void {
    this.socket.destroy();
  }

  private async write(bytes: Buffer): Promise<void> {
    if (this.socket.destroyed) return;
    if (!this.socket.write(bytes))
      await new Promise<void>((resolve) => this.socket.once('drain', resolve).once('close', resolve));
  }

  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers['content-length'] ?? 0);
      if (this.buffer.length < end + 4 + length) return;
      const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      this.answers.push({ status: Number(statusLine?.split(' ')[1]), headers, text, body });
      this.waiting?.();
    }
  }
}

/** One request on a connection of its own. */
export async function rawCall(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawAnswer> {
  const connection = await RawConnection.open(url);
  try {
    await connection.send(method, path, headers, body);
    const answer = await connection.answer();
    if (!answer) throw new Error(`no answer to ${method} ${path.slice(0, 80)} (${connection.error?.code ?? 'closed'})`);
    return answer;
  } finally {
    connection.close();
  }
}
