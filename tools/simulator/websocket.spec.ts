/**
 * The simulator's lean RFC 6455 client (src/websocket.mjs): framing against the byte examples of
 * RFC 6455 section 5.7, the frame reader's checks, the handshake check, and whole connections
 * against a `ws` server (which insists on masked client frames) and a hand-written raw server.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import {
  acceptOf,
  checkHandshake,
  encodeFrame,
  FrameReader,
  OPCODES,
  WebSocketClient,
  WebSocketProtocolError,
} from './src/websocket.mjs';
import { SyncClient } from './src/index.mjs';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const RFC_KEY = hex('37fa213d');

/** A reader whose handler records what it is given. */
function recordingReader(maxPayload?: number) {
  const seen: Array<[string, ...unknown[]]> = [];
  const reader = new FrameReader(
    {
      message: (data, isBinary) => seen.push(['message', data.toString('utf8'), isBinary]),
      ping: (payload) => seen.push(['ping', payload.toString('utf8')]),
      pong: (payload) => seen.push(['pong', payload.toString('utf8')]),
      closeFrame: (code, reason) => seen.push(['close', code, reason]),
    },
    maxPayload,
  );
  return { reader, seen };
}

function protocolError(fn: () => void): WebSocketProtocolError {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebSocketProtocolError) return error;
    throw error;
  }
  throw new Error('no protocol error');
}

describe('encodeFrame', () => {
  it('writes the RFC 6455 examples: unmasked and masked "Hello", fragments, ping', () => {
    expect(encodeFrame(OPCODES.text, 'Hello', true, null)).toEqual(hex('810548656c6c6f'));
    expect(encodeFrame(OPCODES.text, 'Hello', true, RFC_KEY)).toEqual(hex('818537fa213d7f9f4d5158'));
    expect(encodeFrame(OPCODES.text, 'Hel', false, null)).toEqual(hex('010348656c'));
    expect(encodeFrame(OPCODES.continuation, 'lo', true, null)).toEqual(hex('80026c6f'));
    expect(encodeFrame(OPCODES.ping, 'Hello', true, null)).toEqual(hex('890548656c6c6f'));
  });

  it('uses the 7-bit length up to 125 bytes, 16-bit up to 65535, 64-bit beyond', () => {
    expect(encodeFrame(OPCODES.binary, Buffer.alloc(125), true, null).subarray(0, 2)).toEqual(hex('827d'));
    expect(encodeFrame(OPCODES.binary, Buffer.alloc(126), true, null).subarray(0, 4)).toEqual(hex('827e007e'));
    const f256 = encodeFrame(OPCODES.binary, Buffer.alloc(256), true, null);
    expect(f256.subarray(0, 4)).toEqual(hex('827e0100'));
    expect(f256.length).toBe(4 + 256);
    expect(encodeFrame(OPCODES.binary, Buffer.alloc(65535), true, null).subarray(0, 4)).toEqual(hex('827effff'));
    const f64k = encodeFrame(OPCODES.binary, Buffer.alloc(65536), true, null);
    expect(f64k.subarray(0, 10)).toEqual(hex('827f0000000000010000'));
    expect(f64k.length).toBe(10 + 65536);
    // Masked: the key follows the extended length.
    const masked = encodeFrame(OPCODES.binary, Buffer.alloc(70000, 0), true, RFC_KEY);
    expect(masked.subarray(0, 14)).toEqual(hex('82ff0000000000011170 37fa213d'));
    // Zeros masked are the key repeated.
    expect(masked.subarray(14, 22)).toEqual(hex('37fa213d37fa213d'));
  });

  it('masks client frames with a fresh random key that unmasks to the payload (UTF-8)', () => {
    const text = 'héllo wörld '.repeat(20);
    const frames = [encodeFrame(OPCODES.text, text), encodeFrame(OPCODES.text, text)];
    for (const frame of frames) {
      expect(frame[1]! & 0x80).toBe(0x80);
      expect(frame[1]! & 0x7f).toBe(126);
      const key = frame.subarray(4, 8);
      const payload = Buffer.from(frame.subarray(8));
      for (let i = 0; i < payload.length; i++) payload[i]! ^= key[i % 4]!;
      expect(payload.toString('utf8')).toBe(text);
    }
    expect(frames[0]!.subarray(4, 8)).not.toEqual(frames[1]!.subarray(4, 8));
  });
});

describe('FrameReader', () => {
  it('reads frames split at every byte, with 7, 16 and 64-bit lengths', () => {
    const { reader, seen } = recordingReader();
    const big = 'x'.repeat(70000);
    const bytes = Buffer.concat([
      encodeFrame(OPCODES.text, 'Hello', true, null),
      encodeFrame(OPCODES.text, 'y'.repeat(300), true, null),
      encodeFrame(OPCODES.binary, big, true, null),
    ]);
    for (let i = 0; i < 20; i++) reader.push(bytes.subarray(i, i + 1));
    reader.push(bytes.subarray(20, 4000));
    reader.push(bytes.subarray(4000));
    expect(seen).toEqual([
      ['message', 'Hello', false],
      ['message', 'y'.repeat(300), false],
      ['message', big, true],
    ]);
  });

  it('joins a fragmented message and handles a ping between its fragments (RFC 6455 example)', () => {
    const { reader, seen } = recordingReader();
    reader.push(Buffer.concat([hex('010348656c'), encodeFrame(OPCODES.ping, 'p', true, null), hex('80026c6f')]));
    expect(seen).toEqual([
      ['ping', 'p'],
      ['message', 'Hello', false],
    ]);
  });

  it('keeps what it needs of a transient chunk that the caller then reuses', () => {
    const { reader, seen } = recordingReader();
    const frames = Buffer.concat([
      encodeFrame(OPCODES.text, 'first', false, null),
      encodeFrame(OPCODES.continuation, 'second', true, null),
    ]);
    const shared = Buffer.alloc(64);
    frames.copy(shared, 0, 0, 10);
    reader.push(shared.subarray(0, 10), true);
    shared.fill(0xee);
    frames.copy(shared, 0, 10);
    reader.push(shared.subarray(0, frames.length - 10), true);
    expect(seen).toEqual([['message', 'firstsecond', false]]);
  });

  it('reads a close frame (code and reason; none: 1005) and nothing after it', () => {
    const withReason = recordingReader();
    withReason.reader.push(
      Buffer.concat([
        encodeFrame(OPCODES.close, Buffer.concat([hex('0fa0'), Buffer.from('bye')]), true, null),
        encodeFrame(OPCODES.text, 'late', true, null),
      ]),
    );
    expect(withReason.seen).toEqual([['close', 4000, 'bye']]);
    const empty = recordingReader();
    empty.reader.push(encodeFrame(OPCODES.close, Buffer.alloc(0), true, null));
    expect(empty.seen).toEqual([['close', 1005, '']]);
  });

  it('refuses what RFC 6455 forbids with the close code it says', () => {
    const cases: Array<[Buffer, number]> = [
      [encodeFrame(OPCODES.text, 'masked', true, RFC_KEY), 1002],
      [hex('c100'), 1002], // RSV1 set
      [hex('8300'), 1002], // reserved opcode
      [hex('0900'), 1002], // fragmented ping
      [Buffer.concat([hex('897e007e'), Buffer.alloc(126)]), 1002], // control frame of 126 bytes
      [hex('80026c6f'), 1002], // continuation without a message
      [Buffer.concat([hex('010148'), hex('810149')]), 1002], // a new message inside a fragmented one
      [hex('8802ffff'), 1002], // invalid close code
      [hex('880103'), 1002], // 1-byte close payload
      [hex('8102c328'), 1007], // invalid UTF-8 text
      [hex('827fffffffffffffffff'), 1009], // length beyond 2^53
    ];
    for (const [bytes, code] of cases) {
      const { reader, seen } = recordingReader();
      expect(protocolError(() => reader.push(bytes)).closeCode).toBe(code);
      expect(seen).toEqual([]);
    }
    // Beyond maxPayload: one frame, or fragments that add up to more.
    expect(
      protocolError(() => recordingReader(10).reader.push(encodeFrame(OPCODES.text, 'x'.repeat(11), true, null)))
        .closeCode,
    ).toBe(1009);
    const small = recordingReader(10);
    small.reader.push(encodeFrame(OPCODES.text, 'x'.repeat(6), false, null));
    expect(
      protocolError(() => small.reader.push(encodeFrame(OPCODES.continuation, 'x'.repeat(5), true, null))).closeCode,
    ).toBe(1009);
    expect(small.seen).toEqual([]);
  });
});

describe('handshake check', () => {
  const accept = acceptOf('dGhlIHNhbXBsZSBub25jZQ==');
  const answer = (headers: string[], status = 'HTTP/1.1 101 Switching Protocols') => [status, ...headers].join('\r\n');

  it('computes the Sec-WebSocket-Accept of the RFC 6455 example', () => {
    expect(accept).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('accepts a correct 101 and refuses anything else', () => {
    const good = ['Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${accept}`];
    expect(checkHandshake(answer(good), accept)).toBeNull();
    expect(
      checkHandshake(
        answer(['upgrade: WebSocket', 'connection: keep-alive, upgrade', `sec-websocket-accept: ${accept}`]),
        accept,
      ),
    ).toBeNull();
    expect(checkHandshake(answer(['Content-Length: 0'], 'HTTP/1.1 403 Forbidden'), accept)?.message).toBe(
      'upgrade refused: HTTP 403',
    );
    expect(checkHandshake(answer([good[0]!, good[1]!, 'Sec-WebSocket-Accept: AAAA']), accept)?.message).toMatch(
      /Sec-WebSocket-Accept/,
    );
    expect(checkHandshake(answer([good[0]!, good[2]!]), accept)?.message).toMatch(/Connection/);
    expect(checkHandshake(answer([good[1]!, good[2]!]), accept)?.message).toMatch(/Upgrade/);
    expect(checkHandshake(answer([...good, 'Sec-WebSocket-Extensions: permessage-deflate']), accept)?.message).toMatch(
      /extension/,
    );
    expect(checkHandshake(answer([...good, 'Sec-WebSocket-Protocol: chat']), accept)?.message).toMatch(/subprotocol/);
    expect(checkHandshake(answer(good, 'HTTP/1.0 101 Switching Protocols'), accept)?.message).toMatch(
      /not an HTTP\/1.1 answer/,
    );
  });
});

// ----------------------------------------------------------------------------------------------
// Whole connections
// ----------------------------------------------------------------------------------------------

function listen<T extends Server | WebSocketServer>(server: T): Promise<string> {
  return new Promise((resolve) => {
    const done = () => resolve(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/sync`);
    if (server instanceof WebSocketServer) server.once('listening', done);
    else (server as Server).listen(0, '127.0.0.1', done);
  });
}

function open(url: string): Promise<WebSocketClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocketClient(url);
    ws.onopen = () => resolve(ws);
    ws.onerror = reject;
  });
}

const closeOf = (ws: WebSocketClient) =>
  new Promise<[number, string]>((resolve) => (ws.onclose = (code, reason) => resolve([code, reason])));

describe('WebSocketClient against a ws server', () => {
  let wss: WebSocketServer;
  let url: string;
  let lastServerSocket: Promise<ServerSocket>;

  beforeEach(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/sync', perMessageDeflate: false });
    lastServerSocket = new Promise((resolve) => wss.once('connection', resolve));
    url = await listen(wss);
  });
  afterEach(() => new Promise<void>((resolve) => wss.close(() => resolve())));

  it('exchanges text messages of 7, 16 and 64-bit lengths both ways (masked frames accepted by ws)', async () => {
    const client = await open(url);
    const server = await lastServerSocket;
    server.on('message', (data, isBinary) => server.send(data, { binary: isBinary }));
    const received: string[] = [];
    const sizes = [5, 300, 70000];
    const all = new Promise<void>((resolve) => {
      client.onmessage = (text) => {
        received.push(text);
        if (received.length === sizes.length) resolve();
      };
    });
    for (const size of sizes) client.send('é'.repeat(size));
    await all;
    expect(received.map((t) => t.length)).toEqual(sizes);
    expect(received[2]).toBe('é'.repeat(70000));
    client.close();
    await closeOf(client);
  });

  it('answers a ping with a pong carrying the same payload', async () => {
    const client = await open(url);
    const server = await lastServerSocket;
    const pong = new Promise<Buffer>((resolve) => server.once('pong', resolve));
    server.ping(Buffer.from('are you there'));
    expect((await pong).toString()).toBe('are you there');
    client.terminate();
  });

  it('receives fragmented messages from the server', async () => {
    const client = await open(url);
    const server = await lastServerSocket;
    const message = new Promise<string>((resolve) => (client.onmessage = resolve));
    server.send('frag', { fin: false });
    server.send('men', { fin: false });
    server.send('ted', { fin: true });
    expect(await message).toBe('fragmented');
    client.terminate();
  });

  it('completes a close started by the server: its code and reason, the code echoed', async () => {
    const client = await open(url);
    const server = await lastServerSocket;
    const serverSaw = new Promise<number>((resolve) => server.once('close', (code) => resolve(code)));
    const closed = closeOf(client);
    server.close(4010, 'unregistered');
    expect(await closed).toEqual([4010, 'unregistered']);
    expect(await serverSaw).toBe(4010);
    expect(client.readyState).toBe(3);
  });

  it('completes a close it starts; terminate ends without a close frame (1006)', async () => {
    const client = await open(url);
    const server = await lastServerSocket;
    const serverSaw = new Promise<[number, string]>((resolve) =>
      server.once('close', (code, reason) => resolve([code, reason.toString()])),
    );
    const closed = closeOf(client);
    client.close(4000, 'done');
    expect(client.send('after close')).toBe(false);
    expect(await serverSaw).toEqual([4000, 'done']);
    expect(await closed).toEqual([4000, 'done']);

    lastServerSocket = new Promise((resolve) => wss.once('connection', resolve));
    const other = await open(url);
    const otherServer = await lastServerSocket;
    const otherServerSaw = new Promise<number>((resolve) => otherServer.once('close', (code) => resolve(code)));
    const otherClosed = closeOf(other);
    other.terminate();
    expect(await otherClosed).toEqual([1006, '']);
    expect(await otherServerSaw).toBe(1006);
  });
});

describe('WebSocketClient over TLS (wss:)', () => {
  it('upgrades and exchanges messages through a TLS connection', async () => {
    // A self-signed certificate for localhost, made for this test.
    const dir = mkdtempSync(join(tmpdir(), 'sim-wss-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'));
      const https = createHttpsServer({ cert, key: readFileSync(join(dir, 'key.pem')) });
      const wss = new WebSocketServer({ server: https, path: '/sync', perMessageDeflate: false });
      wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${(data as Buffer).toString()}`)));
      await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
      const client = new WebSocketClient(`wss://localhost:${(https.address() as AddressInfo).port}/sync`, {
        tls: { ca: cert, host: '127.0.0.1' },
      });
      await new Promise<void>((resolve, reject) => {
        client.onopen = resolve;
        client.onerror = reject;
      });
      const answer = new Promise<string>((resolve) => (client.onmessage = resolve));
      client.send('over tls');
      expect(await answer).toBe('echo over tls');
      const closed = closeOf(client);
      client.close();
      expect(await closed).toEqual([1000, '']);
      wss.close();
      await new Promise((resolve) => https.close(resolve));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('WebSocketClient against a raw server', () => {
  let server: Server;
  let url: string;
  /** What the raw server does with a client's upgrade request (the key) and socket. */
  let onUpgrade: (key: string, socket: Socket) => void;
  const sockets = new Set<Socket>();

  beforeEach(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      let head = '';
      const onData = (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        onUpgrade(/Sec-WebSocket-Key: (\S+)/i.exec(head)![1]!, socket);
      };
      socket.on('data', onData);
      socket.on('error', () => undefined);
    });
    url = await listen(server);
  });
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    await new Promise((resolve) => server.close(resolve));
  });

  const switching = (accept: string) =>
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;

  it('refuses a handshake answer with a wrong Sec-WebSocket-Accept, and a refused upgrade', async () => {
    onUpgrade = (_key, socket) => socket.write(switching(acceptOf('another key')));
    await expect(open(url)).rejects.toThrow('invalid Sec-WebSocket-Accept header in the handshake answer');
    onUpgrade = (_key, socket) => socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    await expect(open(url)).rejects.toThrow('upgrade refused: HTTP 404');
  });

  it('reads frames sent together with the handshake answer, and fails the connection on a masked server frame with 1002', async () => {
    const fromClient: Buffer[] = [];
    onUpgrade = (key, socket) => {
      socket.on('data', (chunk) => fromClient.push(chunk));
      socket.write(
        Buffer.concat([
          Buffer.from(switching(acceptOf(key)), 'latin1'),
          encodeFrame(OPCODES.text, '{"hello":1}', true, null),
        ]),
      );
    };
    const ws = new WebSocketClient(url);
    const first = new Promise<string>((resolve) => (ws.onmessage = resolve));
    const errors: Error[] = [];
    ws.onerror = (error) => errors.push(error);
    expect(await first).toBe('{"hello":1}');
    const closed = closeOf(ws);
    sockets.forEach((s) => s.write(encodeFrame(OPCODES.text, 'masked', true, RFC_KEY)));
    expect(await closed).toEqual([1006, '']);
    expect(errors.map((e) => (e as WebSocketProtocolError).closeCode)).toEqual([1002]);
    // The client's close frame: masked, code 1002.
    const frame = Buffer.concat(fromClient);
    expect(frame[0]).toBe(0x88);
    expect(frame[1]).toBe(0x82);
    const code = Buffer.from(frame.subarray(6, 8));
    for (let i = 0; i < 2; i++) code[i]! ^= frame[2 + i]!;
    expect(code.readUInt16BE(0)).toBe(1002);
  });
});

describe('SyncClient requests', () => {
  let wss: WebSocketServer;
  let url: string;
  /** Answers of the server, by request type. */
  let answer: (frame: { id: number; type: string; data?: unknown }, ws: ServerSocket) => void;

  beforeEach(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/sync', perMessageDeflate: false });
    wss.on('connection', (ws) => ws.on('message', (raw) => answer(JSON.parse((raw as Buffer).toString()), ws)));
    url = await listen(wss);
  });
  afterEach(() => new Promise<void>((resolve) => wss.close(() => resolve())));

  it('matches answers to requests by id (in any order), errors to SyncRequestError, and sends a batch in one write', async () => {
    const held: Array<() => void> = [];
    answer = (frame, ws) => {
      const send = () =>
        ws.send(
          JSON.stringify(
            frame.type === 'bad'
              ? { type: 'error', id: frame.id, error: { code: 'Forbidden', message: 'no' } }
              : { type: 'result', id: frame.id, data: { echo: frame.data } },
          ),
        );
      held.push(send);
      if (held.length === 3) held.reverse().forEach((s) => s());
    };
    const client = await SyncClient.connect(url);
    const socket = client.ws.socket;
    const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
    let writes = 0;
    socket.write = ((...args: unknown[]) => {
      writes++;
      return write(...args);
    }) as Socket['write'];
    const [a, b, c] = client.batch(() => [client.request('one', 1), client.request('bad'), client.request('three', 3)]);
    expect(writes).toBe(1);
    await expect(a).resolves.toEqual({ echo: 1 });
    await expect(b).rejects.toMatchObject({ name: 'SyncRequestError', type: 'bad', code: 'Forbidden' });
    await expect(c).resolves.toEqual({ echo: 3 });
    await client.close();
  });

  it('fails a request not answered in time with ClientTimeout, ignores its late answer, and goes on', async () => {
    let late: (() => void) | undefined;
    answer = (frame, ws) => {
      const send = () => ws.send(JSON.stringify({ type: 'result', id: frame.id, data: { type: frame.type } }));
      if (frame.type === 'slow') late = send;
      else send();
    };
    const client = await SyncClient.connect(url, { requestTimeoutMs: 50 });
    await expect(client.request('slow')).rejects.toMatchObject({ code: 'ClientTimeout' });
    late!();
    await expect(client.request('quick')).resolves.toEqual({ type: 'quick' });
    await client.close();
  });

  it('fails the requests in flight with Closed when the socket closes, and sees pushes and the close code', async () => {
    answer = (frame, ws) => {
      ws.send(JSON.stringify({ type: 'push', push: { type: 'unregistered', reason: frame.type } }));
      ws.close(4010, 'unregistered');
    };
    const client = await SyncClient.connect(url);
    const pushes: unknown[] = [];
    client.onPush((p) => pushes.push(p));
    await expect(client.request('anything')).rejects.toMatchObject({ code: 'Closed' });
    expect(await client.closed).toEqual({ code: 4010, reason: 'unregistered' });
    expect(pushes).toEqual([{ type: 'unregistered', reason: 'anything' }]);
    expect(client.open).toBe(false);
    await expect(client.request('after')).rejects.toMatchObject({ code: 'Closed' });
  });
});
