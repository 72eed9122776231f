/** A bare /sync socket for the corpus: send a frame, await the answer with its id (or id null), see the close. */
import WebSocket from 'ws';

export interface Frame {
  type: string;
  id?: string | number | null;
  data?: any;
  error?: { code: string; message: string };
}

export class SyncSocket {
  readonly frames: Frame[] = [];
  closeCode: number | null = null;
  private waiters: Array<() => void> = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      try {
        this.frames.push(JSON.parse((raw as Buffer).toString()) as Frame);
      } catch {
        this.frames.push({ type: 'unreadable' });
      }
      this.wake();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  static async open(url: string): Promise<SyncSocket> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new SyncSocket(ws);
  }

  get open(): boolean {
    return this.closeCode === null && this.ws.readyState === WebSocket.OPEN;
  }

  send(text: string | Buffer, binary = false): void {
    this.ws.send(text, { binary });
  }

  /**
   * The first answer (result or error) with `id` (undefined: any id) received after frame number
   * `from`, or null once closed or after `timeoutMs`.
   */
  async answer(id: string | number | null | undefined, from: number, timeoutMs = 5000): Promise<Frame | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames
        .slice(from)
        .find((f) => (f.type === 'result' || f.type === 'error') && (id === undefined || f.id === id));
      if (found) return found;
      if (this.closeCode !== null || Date.now() >= deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a request and awaits its answer. */
  async request(
    type: string,
    data?: unknown,
    id: string | number = `r-${Math.random().toString(36).slice(2)}`,
  ): Promise<Frame | null> {
    const from = this.frames.length;
    this.send(JSON.stringify(data === undefined ? { id, type } : { id, type, data }));
    return this.answer(id, from);
  }

  async closed(timeoutMs = 5000): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.closeCode;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}
