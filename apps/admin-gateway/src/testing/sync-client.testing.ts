/** A bare /sync client for tests: send request frames, await their answers, collect pushes, see the close. */
import type { ServerPush, SyncErrorBody, SyncRequestType } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import WebSocket, { type RawData } from 'ws';

/** The identity a client token names. */
export interface Identity {
  userId: string;
  deviceId: string;
  clientId: string;
}

/** A fresh identity (user, device and client ids), unique to the caller. */
export function identity(): Identity {
  return { userId: `u-${randomUUID()}`, deviceId: `d-${randomUUID()}`, clientId: `c-${randomUUID()}` };
}

export type Answer =
  | { type: 'result'; id: string | number; data: any }
  | { type: 'error'; id: string | number | null; error: SyncErrorBody };

export class TestSyncClient {
  readonly pushes: ServerPush[] = [];
  readonly unsolicitedErrors: SyncErrorBody[] = [];
  /** The answers (result and error frames with an id) in the order they arrived. */
  readonly answers: Answer[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly waiting = new Map<string | number, (answer: Answer) => void>();
  private pushWaiters: Array<() => void> = [];
  private next = 1;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })),
    );
    ws.on('message', (raw) => {
      const frame = JSON.parse(textOf(raw)) as Answer | { type: 'push'; push: ServerPush };
      if (frame.type === 'push') {
        this.pushes.push(frame.push);
        for (const w of this.pushWaiters.splice(0)) w();
        return;
      }
      if (frame.id === null) {
        if (frame.type === 'error') this.unsolicitedErrors.push(frame.error);
        for (const w of this.pushWaiters.splice(0)) w();
        return;
      }
      this.answers.push(frame);
      this.waiting.get(frame.id)?.(frame);
      this.waiting.delete(frame.id);
    });
  }

  static async open(url: string): Promise<TestSyncClient> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new TestSyncClient(ws);
  }

  /** Sends a request frame (a SyncRequestType, or any string to test the refusal) and resolves with its answer. */
  request(type: string, data?: unknown, id: string | number = this.next++): Promise<Answer> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify(data === undefined ? { id, type } : { id, type, data }));
    });
  }

  /** Like request, but fails the test unless the answer is a result. */
  async ok(type: SyncRequestType, data?: unknown): Promise<any> {
    const answer = await this.request(type, data);
    if (answer.type !== 'result') throw new Error(`${type} failed: ${JSON.stringify(answer.error)}`);
    return answer.data;
  }

  /** Opens a peer connection sending and receiving audio (the connection most cases need); like ok. */
  openPeerAudio(channelId: string, connectionId: string): Promise<any> {
    const streams = { audio: { direction: 'sendrecv' } };
    return this.ok('connection.open', { channelId, connectionId, type: 'peer', streams });
  }

  /** Resolves with the next push (by position: the n-th push this client received, from 0). */
  async push(index: number): Promise<ServerPush> {
    while (this.pushes.length <= index) await new Promise<void>((resolve) => this.pushWaiters.push(resolve));
    return this.pushes[index]!;
  }

  sendRaw(data: string | Buffer, binary = false) {
    this.ws.send(data, { binary });
  }

  close() {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
  }

  terminate() {
    this.ws.terminate();
  }
}

function textOf(raw: RawData): string {
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw).toString('utf8');
}

/** The error answer refusing to unmute `field` of a connection an operator disabled unmuting of. */
export const unmuteRefusal = (field: string) =>
  expect.objectContaining({
    type: 'error',
    error: expect.objectContaining({ code: 'UnmuteDisabled', details: [expect.objectContaining({ field })] }),
  });
