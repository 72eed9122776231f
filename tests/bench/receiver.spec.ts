// bench/webhooks' receivers: both answer what the worker's HTTP client sends, and the lean one
// (a bare socket) handles what a bare socket can be handed: requests split across reads,
// several in one read, and requests it cannot frame.
import net from 'node:net';
import { request } from 'undici';
import { contentLength, startReceiver, type Receiver } from '../../bench/webhooks/receiver.mjs';

/**
 * Writes `chunks` to the receiver one by one (a pause between them) and reads until `until` matches, the socket closes,
 * or 5 s passed.
 */
async function raw(url: string, chunks: string[], until: RegExp): Promise<{ text: string; closed: boolean }> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let text = '';
  let closed = false;
  const done = new Promise<void>((resolve) => {
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (until.test(text)) resolve();
    });
    socket.on('close', () => {
      closed = true;
      resolve();
    });
    setTimeout(resolve, 5000).unref();
  });
  for (const c of chunks) {
    socket.write(c);
    await new Promise((r) => setTimeout(r, 20));
  }
  await done;
  socket.destroy();
  return { text, closed };
}

const post = (body: string) =>
  `POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe.each(['lean', 'node'] as const)('bench receiver (%s)', (kind) => {
  let receiver: Receiver;
  const bodies: string[] = [];

  beforeEach(async () => {
    bodies.length = 0;
    receiver = await startReceiver({ kind, onBody: (text) => bodies.push(text) });
  });
  afterEach(() => receiver.close());

  it('answers 200 to undici POSTs on one keep-alive connection and hands over each body (utf-8) whole', async () => {
    for (const body of ['{"id":"a"}', JSON.stringify({ id: 'b', text: 'é✓'.repeat(5000) })]) {
      const res = await request(receiver.url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('');
    }
    expect(bodies).toEqual(['{"id":"a"}', JSON.stringify({ id: 'b', text: 'é✓'.repeat(5000) })]);
  });

  it('takes a request split across reads, and two in one read, answering each in order', async () => {
    const one = post('{"n":1}');
    const { text } = await raw(
      receiver.url,
      [one.slice(0, 20), one.slice(20, -3), one.slice(-3) + post('{"n":2}') + post('{"n":3}')],
      /(HTTP\/1\.1 200[^]*){3}/,
    );
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    expect(bodies).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
  });
});

describe('bench receiver (lean): what it cannot frame', () => {
  let receiver: Receiver;
  const bodies: string[] = [];
  beforeEach(async () => {
    bodies.length = 0;
    receiver = await startReceiver({ onBody: (text) => bodies.push(text) });
  });
  afterEach(() => receiver.close());

  it('answers 411 and closes the connection for a request without content-length', async () => {
    const { text, closed } = await raw(
      receiver.url,
      ['POST /hook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'],
      /$^/,
    );
    expect(text).toMatch(/^HTTP\/1\.1 411 /);
    expect(closed).toBe(true);
    expect(bodies).toEqual([]);
  });

  it('answers 400 and closes the connection when a head passes 16 KiB', async () => {
    const { text, closed } = await raw(receiver.url, [`POST /hook HTTP/1.1\r\nX-Long: ${'a'.repeat(17 * 1024)}`], /$^/);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(closed).toBe(true);
  });

  it('reads content-length case-insensitively, only as a whole header', () => {
    expect(contentLength('POST / HTTP/1.1\r\nHost: x\r\ncontent-LENGTH:  42 ')).toBe(42);
    expect(contentLength('POST / HTTP/1.1\r\nX-Content-Length: 42\r\nHost: x')).toBe(-1);
    expect(contentLength('POST / HTTP/1.1\r\nContent-Length: 4x2\r\nHost: x')).toBe(-1);
  });
});
