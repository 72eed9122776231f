import Janode, {
  type JanodeConnection,
  type JanodeHandle,
  type JanodePlugin,
  type JanodeSession,
  type JanusServerInfo,
} from 'janode';
import { Backoff } from './backoff.js';

export interface JanusClientOptions {
  /** ws:// URL of the Janus API. */
  url: string;
  requestTimeoutMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Interval of the session keep-alive (below Janus's session_timeout). */
  keepAliveSeconds: number;
}

export type JanusChange = { up: true; info: JanusInfo } | { up: false; reason: string };

/** What the agent reads from Janus `info`. */
export interface JanusInfo {
  name: string;
  /** e.g. "1.1.2" */
  version: string;
  sessionTimeoutSeconds: number;
}

// janode logs to stdout in its own format; the agent logs Janus events itself, as JSON.
Janode.Logger.setLevel('none');

/** Rejects with `message` when `promise` takes longer than `ms`. */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function toInfo(raw: JanusServerInfo): JanusInfo {
  return { name: raw.name, version: raw.version_string, sessionTimeoutSeconds: raw['session-timeout'] };
}

/**
 * The agent's link to its Janus (Janus API over WebSocket, through janode): connects, keeps one
 * session alive, and reconnects with exponential backoff whenever the connection or the session
 * is lost. `info()` asks Janus itself, so it fails as soon as Janus stops answering.
 */
export class JanusClient {
  private connection?: JanodeConnection;
  private session?: JanodeSession;
  /** Connections already given up: their late events change nothing. */
  private readonly dropped = new WeakSet<JanodeConnection>();
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private readonly backoff: Backoff;
  private readonly listeners = new Set<(change: JanusChange) => void>();

  constructor(private readonly options: JanusClientOptions) {
    this.backoff = new Backoff(options.reconnectMinMs, options.reconnectMaxMs);
  }

  /** Whether the connection and the session are up (as far as janode knows). */
  get connected(): boolean {
    return this.session !== undefined;
  }

  /** Janus's id of the agent's session (Admin API requests name it), while connected. */
  get sessionId(): number | undefined {
    return this.session?.id;
  }

  /** Calls `listener` on every change between connected (with the Janus info) and lost (with why). */
  onChange(listener: (change: JanusChange) => void): void {
    this.listeners.add(listener);
  }

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  /** Janus `info`, asked now; rejects when not connected or when Janus does not answer in time. */
  async info(): Promise<JanusInfo> {
    const connection = this.connection;
    if (!connection || !this.session) throw new Error('not connected to Janus');
    return toInfo(
      await within(connection.getInfo(), this.options.requestTimeoutMs, 'Janus did not answer info in time'),
    );
  }

  /** A new handle of `plugin` on the agent's session; rejects when not connected or Janus does not answer. */
  async attach<H extends JanodeHandle>(plugin: JanodePlugin<H>): Promise<H> {
    const session = this.session;
    if (!session) throw new Error('not connected to Janus');
    const attaching = session.attach(plugin);
    try {
      return await within(attaching, this.options.requestTimeoutMs, 'Janus did not attach a handle in time');
    } catch (e) {
      // A handle attached after the timeout is detached at once.
      void attaching.then((late) => late.detach()).catch(() => undefined);
      throw e;
    }
  }

  /** Treats the link as lost (e.g. Janus stopped answering while its socket stays open) and reconnects. */
  reset(reason: string): void {
    if (!this.connection) return;
    this.lost(this.connection, reason);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const connection = this.connection;
    this.connection = undefined;
    this.session = undefined;
    if (connection) this.dropped.add(connection);
    await connection?.close().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    let connection: JanodeConnection | undefined;
    const opening = Janode.connect({ address: { url: this.options.url }, max_retries: 0 });
    try {
      connection = await within(opening, this.options.requestTimeoutMs, 'Janus did not accept the connection in time');
      if (this.stopped) {
        await connection.close().catch(() => undefined);
        return;
      }
      connection.once(Janode.EVENT.CONNECTION_ERROR, (e: Error) =>
        this.lost(connection!, `connection to Janus lost: ${e.message}`),
      );
      connection.once(Janode.EVENT.CONNECTION_CLOSED, () => this.lost(connection!, 'connection to Janus closed'));
      const session = await within(
        connection.create(this.options.keepAliveSeconds),
        this.options.requestTimeoutMs,
        'Janus did not create a session in time',
      );
      session.once(Janode.EVENT.SESSION_DESTROYED, () =>
        this.lost(connection!, 'Janus session ended (keep-alive failed or Janus destroyed it)'),
      );
      if (this.stopped) {
        await connection.close().catch(() => undefined);
        return;
      }
      this.connection = connection;
      this.session = session;
      const info = await this.info();
      this.backoff.reset();
      this.emit({ up: true, info });
    } catch (e) {
      if (connection) this.lost(connection, (e as Error).message);
      else {
        // A connection that opens after its timeout is closed at once (an open one keeps Node alive).
        void opening.then((late) => late.close()).catch(() => undefined);
        this.retry();
      }
    }
  }

  /** Drops `connection` once and reconnects. */
  private lost(connection: JanodeConnection, reason: string): void {
    if (this.stopped || this.dropped.has(connection)) return;
    this.dropped.add(connection);
    const wasUp = this.connection === connection;
    this.connection = undefined;
    this.session = undefined;
    connection.removeAllListeners(Janode.EVENT.CONNECTION_CLOSED);
    void connection.close().catch(() => undefined);
    if (wasUp) this.emit({ up: false, reason });
    this.retry();
  }

  private emit(change: JanusChange): void {
    for (const listener of this.listeners) listener(change);
  }

  private retry(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = this.backoff.next();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
  }
}
