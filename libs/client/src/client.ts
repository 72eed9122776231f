import type {
  ChannelClaim,
  RemoteUpstream,
  ServerPush,
  SyncRegisterResult,
  SyncRequestDataOf,
  SyncRequestType,
  SyncResults,
} from '@switchboard/contracts';
import type { Connection, ConnectionHost, EndReason } from './connection.js';
import {
  DownstreamConnection,
  MixerConnection,
  UpstreamConnection,
  type LocalMediaOptions,
  type PublishOptions,
  type RemoteUpstreamRef,
} from './connections.js';
import { ClientError, SyncError } from './errors.js';
import { PeerConnection, type PeerOptions } from './peer.js';
import { Emitter } from './emitter.js';
import {
  backgroundTimer,
  globalConstructor,
  type MediaTrackLike,
  type PeerConnectionConstructor,
  type PeerConnectionLike,
  type SocketCloseEvent,
  type WebSocketConstructor,
} from './platform.js';
import { ReconnectPolicy, type ReconnectOptions } from './reconnect.js';
import { SyncSocket } from './sync-socket.js';
import { refreshDelayMs, tokenExpiry } from './token.js';

type PushOf<T extends ServerPush['type']> = Extract<ServerPush, { type: T }>;
type PushEvents = { [T in ServerPush['type']]: [PushOf<T>] };

export interface ClientEvents extends PushEvents {
  registered: [SyncRegisterResult];
  /** The socket dropped; the SDK reconnects and registers again (resume within the grace period). */
  disconnected: [SocketCloseEvent];
  reconnecting: [{ attempt: number; delayMs: number }];
  /** Registered again: `resumed` false means the grace period had passed (channels and connections are gone). */
  reconnected: [{ resumed: boolean; droppedPushes: number }];
  /** Final: unregistered, replaced, refused, or given up reconnecting. */
  closed: [{ code: number; reason: string; error?: Error }];
  /** A connection the SDK opened by itself (`autoSubscribe`). */
  connection: [Connection];
  token: [string];
  /** A background failure (a trickle, stats report, renegotiation or auto-subscribe that failed). */
  error: [Error];
  /** Every push, after its typed event (for a listener of all of them). */
  push: [ServerPush];
}

export interface ClientOptions {
  /** `ws(s)://<gateway>/sync`. */
  url: string;
  /** The WebSocket class (default `globalThis.WebSocket`; in Node, `ws`'s works). */
  WebSocket?: WebSocketConstructor;
  /** The RTCPeerConnection class (default `globalThis.RTCPeerConnection`; in Node, werift's works). */
  RTCPeerConnection?: PeerConnectionConstructor;
  /** Merged into every RTCPeerConnection's configuration (its `iceServers` win over the register result's). */
  peerConnectionConfig?: Record<string, unknown>;
  /** Asked for a fresh register token before the current one expires, and when a register says TokenExpired. */
  getToken?: () => string | Promise<string>;
  /** How long before `exp` a token is replaced (default 60 s). */
  tokenRefreshLeadSeconds?: number;
  requestTimeoutMs?: number;
  /** Stats of each connection reported every so often (default 10 s; 0: never). */
  statsIntervalMs?: number;
  /** Trickle ICE candidates (default) or wait for gathering and send them in the SDP. */
  trickleIce?: boolean;
  /** Open a downstream connection for every remote upstream of a joined channel (or those the function accepts). */
  autoSubscribe?: boolean | ((upstream: RemoteUpstream, channelId: string) => boolean);
  /** Backoff of the resume after a dropped socket; `false`: no resume, a dropped socket is final (`closed`). */
  reconnect?: ReconnectOptions | false;
  /**
   * When a session could not be resumed (grace period over, gateway replica restarted): join its
   * channels again and publish the same tracks on new connections (default true).
   */
  restore?: boolean;
  /** Sent with `register`. */
  userAlias?: string | null;
  deviceAlias?: string | null;
  tag?: string | null;
}

type ClientState = 'idle' | 'registering' | 'registered' | 'reconnecting' | 'closed';
// Close codes after which the session is over: unregistered, application refused, replaced, unregistered by the server.
const FINAL_CLOSE_CODES = new Set([1000, 4003, 4009, 4010]);
const FINAL_REGISTER_ERRORS = new Set(['TokenInvalid', 'ApplicationRefused']);

/** A `/sync` client: one session with the gateway, its channels and its connections. */
export class Client extends Emitter<ClientEvents> {
  state: ClientState = 'idle';
  session?: SyncRegisterResult;
  readonly channels = new Map<string, { claim: ChannelClaim }>();
  readonly connections = new Map<string, Connection>();
  private token?: string;
  private socket?: SyncSocket;
  private lastRequestId = 0;
  private ready?: { promise: Promise<void>; resolve(): void; reject(error: Error): void };
  private refreshTimer?: ReturnType<typeof setTimeout>;
  private heldPushes: ServerPush[] = [];
  private pipelined?: () => void;
  private pipelining = false;
  private readonly WebSocket: WebSocketConstructor;
  private readonly host: ConnectionHost;

  constructor(private readonly options: ClientOptions) {
    super();
    const WebSocket = options.WebSocket ?? globalConstructor<WebSocketConstructor>('WebSocket');
    if (!WebSocket) throw new ClientError('NoPlatform', 'no WebSocket given and none on globalThis');
    this.WebSocket = WebSocket;
    this.host = {
      request: (type, data) => this.request(type, data),
      createPeerConnection: () => this.createPeerConnection(),
      forget: (connection) => this.connections.delete(connection.connectionId),
      reportError: (error) => this.emit('error', error instanceof Error ? error : new Error(String(error))),
      statsIntervalMs: options.statsIntervalMs ?? 10000,
      trickleIce: options.trickleIce ?? true,
    };
  }

  get clientId(): string | undefined {
    return this.session?.clientId;
  }

  /**
   * Registers with a client token (or one from `getToken`). Rejects with a SyncError (e.g. `TokenInvalid`).
   * `pipelined`: called right after the register frame is sent; the requests it makes go on the same
   * socket at once, ahead of the result (the gateway runs them in order; a refused register fails them).
   */
  async register(token?: string, options: { pipelined?: () => void } = {}): Promise<SyncRegisterResult> {
    if (this.state !== 'idle') throw new ClientError('InvalidState', `register: the client is ${this.state}`);
    this.state = 'registering';
    this.pipelined = options.pipelined;
    this.waitUntilReady();
    try {
      this.token = token ?? (await this.freshToken());
      const result = await this.connectAndRegister();
      this.registered(result);
      this.releaseHeldPushes();
      return result;
    } catch (error) {
      // Not registered: the app may call register again (with another token).
      this.socket?.close();
      this.socket = undefined;
      this.state = 'idle';
      this.ready?.reject(error as Error);
      throw error;
    }
  }

  /**
   * Sends a request of the protocol and resolves with its result data. While the SDK reconnects,
   * the request waits for the session to be back. Rejects with a SyncError or a ClientError.
   */
  async request<T extends SyncRequestType>(type: T, data?: SyncRequestDataOf<T>): Promise<SyncResults[T]> {
    if (this.pipelining && this.socket) return this.socket.request(type, data);
    if (this.state === 'reconnecting' || this.state === 'registering') await this.ready?.promise;
    if (this.state === 'idle') throw new ClientError('InvalidState', `${type}: register first`);
    if (this.state === 'closed' || !this.socket) throw new ClientError('Closed', `${type}: the client is closed`);
    return this.socket.request(type, data);
  }

  async join(channelId: string, options: { token?: string } = {}): Promise<SyncResults['join']> {
    const joined = await this.request('join', { channelId, ...(options.token ? { token: options.token } : {}) });
    this.channels.set(channelId, { claim: joined.claim });
    for (const upstream of joined.upstreams ?? []) this.autoSubscribe(channelId, upstream);
    return joined;
  }

  async leave(channelId: string): Promise<void> {
    await this.request('leave', { channelId });
    this.channelGone(channelId, 'left');
  }

  sendMessage(channelId: string, message: string, to?: SyncRequestDataOf<'message'>['to']) {
    return this.request('message', { channelId, message, ...(to ? { to } : {}) });
  }

  /** Changes the client's aliases or tag. */
  async update(fields: SyncRequestDataOf<'client.update'>): Promise<void> {
    await this.request('client.update', fields);
  }

  /** Unregisters (the server closes the client's connections) and closes the socket. */
  async unregister(): Promise<void> {
    await this.request('unregister', {});
    this.finish({ code: 1000, reason: 'unregistered' });
  }

  /** Closes the socket without unregistering: the server keeps the session for its grace period. */
  close(): void {
    this.finish({ code: 1000, reason: 'closed by the app' }, 'closed');
  }

  /** Publishes local tracks on an upstream `sfu` connection; resolves once the media server answered. */
  async publish(channelId: string, options: PublishOptions): Promise<UpstreamConnection> {
    const connection = new UpstreamConnection(this.host, options.connectionId ?? newId(), channelId, options);
    return this.started(connection, connection.start(options.tag));
  }

  /** Receives a remote upstream on a downstream `sfu` connection. */
  async subscribe(
    channelId: string,
    remote: RemoteUpstreamRef | string,
    options: { connectionId?: string; tag?: string | null } = {},
  ): Promise<DownstreamConnection> {
    const ref = typeof remote === 'string' ? { connectionId: remote } : remote;
    const connection = new DownstreamConnection(this.host, options.connectionId ?? newId(), channelId, ref);
    return this.started(connection, connection.start(options.tag));
  }

  /** Joins the channel's audio mix on an `mcu` connection. */
  async joinMixer(channelId: string, options: LocalMediaOptions & { audio: MediaTrackLike }): Promise<MixerConnection> {
    const connection = new MixerConnection(this.host, options.connectionId ?? newId(), channelId, options);
    return this.started(connection, connection.start(options.tag));
  }

  /**
   * Opens a `peer` connection to the other client's peer connection `remoteConnectionId` (which
   * must name this one back: agree on both ids in the app). Resolves once the first offer and
   * answer went through the server (the other side may open after this one, within `waitMs`).
   */
  async openPeer(channelId: string, remoteConnectionId: string, options: PeerOptions = {}): Promise<PeerConnection> {
    const connectionId = options.connectionId ?? newId();
    if (connectionId === remoteConnectionId)
      throw new ClientError('InvalidState', 'a peer connection cannot name itself as its remote connection');
    const connection = new PeerConnection(this.host, connectionId, channelId, remoteConnectionId, options);
    return this.started(connection, connection.start(options.tag));
  }

  // ---- session -----------------------------------------------------------------------------------

  private async started<T extends Connection>(connection: T, start: Promise<void>): Promise<T> {
    this.connections.set(connection.connectionId, connection);
    await start;
    return connection;
  }

  private async connectAndRegister(): Promise<SyncRegisterResult> {
    for (let refreshed = false; ; refreshed = true) {
      let opened: SyncSocket | undefined;
      const socket = await SyncSocket.open(this.WebSocket, this.options.url, {
        nextId: () => ++this.lastRequestId,
        timeoutMs: this.options.requestTimeoutMs ?? 15000,
        handlers: {
          push: (push) => this.pushed(push),
          frameError: (error) => this.emit('error', error),
          close: (event) => opened && this.socketClosed(opened, event),
        },
      });
      this.socket = opened = socket;
      try {
        const registering = socket.request('register', this.registerData());
        this.sendPipelined();
        return await registering;
      } catch (error) {
        socket.close();
        const expired = error instanceof SyncError && error.code === 'TokenExpired';
        if (!expired || refreshed || !this.options.getToken) throw error;
        this.token = await this.freshToken();
      }
    }
  }

  /** Runs the `pipelined` callback of `register` (once): its requests are sent before the register result. */
  private sendPipelined(): void {
    const pipelined = this.pipelined;
    this.pipelined = undefined;
    if (!pipelined) return;
    this.pipelining = true;
    try {
      pipelined();
    } finally {
      this.pipelining = false;
    }
  }

  private registerData(): SyncRequestDataOf<'register'> {
    const { userAlias, deviceAlias, tag } = this.options;
    const optional = Object.entries({ userAlias, deviceAlias, tag }).filter(([, value]) => value !== undefined);
    return { token: this.token!, ...Object.fromEntries(optional) };
  }

  private registered(result: SyncRegisterResult): void {
    this.session = result;
    this.state = 'registered';
    this.scheduleTokenRefresh();
    this.emit('registered', result);
    this.ready?.resolve();
  }

  private releaseHeldPushes(): void {
    const held = this.heldPushes;
    this.heldPushes = [];
    for (const push of held) this.pushed(push);
  }

  private socketClosed(socket: SyncSocket, event: SocketCloseEvent): void {
    if (socket !== this.socket || this.state !== 'registered') return;
    this.socket = undefined;
    if (FINAL_CLOSE_CODES.has(event.code) || this.options.reconnect === false) return this.finish({ ...event });
    this.emit('disconnected', event);
    void this.resume();
  }

  /** Reconnects with backoff and registers again: within the grace period the session is resumed. */
  private async resume(): Promise<void> {
    this.state = 'reconnecting';
    this.waitUntilReady();
    this.heldPushes = [];
    const policy = new ReconnectPolicy(this.options.reconnect || undefined);
    for (let delayMs = policy.next(); delayMs !== undefined; delayMs = policy.next()) {
      this.emit('reconnecting', { attempt: policy.attempts, delayMs });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (this.state !== 'reconnecting') return;
      try {
        const result = await this.connectAndRegister();
        this.resumedWith(result);
        return;
      } catch (error) {
        if (error instanceof SyncError && FINAL_REGISTER_ERRORS.has(error.code))
          return this.finish({ code: 4001, reason: error.message, error });
      }
    }
    this.finish({
      code: 1006,
      reason: 'could not reconnect',
      error: new ClientError('Closed', 'gave up reconnecting'),
    });
  }

  private resumedWith(result: SyncRegisterResult): void {
    const lost = { channels: [...this.channels.keys()], connections: [...this.connections.values()] };
    const open = new Map(result.connections.map((connection) => [connection.connectionId, connection]));
    for (const connection of this.connections.values()) {
      const held = result.resumed ? open.get(connection.connectionId) : undefined;
      if (held) connection.applyState(held.state);
      else connection.end('session-lost');
    }
    this.channels.clear();
    for (const channel of result.channels) this.channels.set(channel.channelId, { claim: channel.claim });
    this.registered(result);
    this.emit('reconnected', { resumed: result.resumed, droppedPushes: result.droppedPushes });
    this.releaseHeldPushes();
    if (!result.resumed && this.options.restore !== false) void this.restore(lost.channels, lost.connections);
  }

  /** Joins the lost channels again and republishes the lost local media; new connections come as `connection`. */
  private async restore(channels: string[], connections: Connection[]): Promise<void> {
    for (const channelId of channels) {
      const joined = await this.join(channelId).then(
        () => true,
        (error: unknown) => (this.host.reportError(error), false),
      );
      if (!joined) continue;
      for (const lost of connections) {
        if (lost.channelId !== channelId) continue;
        const again =
          lost instanceof UpstreamConnection
            ? this.publish(channelId, lost.republishOptions())
            : lost instanceof MixerConnection
              ? this.joinMixer(channelId, lost.republishOptions())
              : undefined;
        await again?.then(
          (connection) => this.emit('connection', connection),
          (error: unknown) => this.host.reportError(error),
        );
      }
    }
  }

  private finish(event: { code: number; reason: string; error?: Error }, reason: EndReason = 'unregistered'): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.refreshTimer);
    this.socket?.close(1000, event.reason);
    this.socket = undefined;
    for (const connection of this.connections.values()) connection.end(reason);
    this.ready?.reject(new ClientError('Closed', event.reason));
    this.emit('closed', event);
  }

  private waitUntilReady(): void {
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((ok, fail) => ((resolve = ok), (reject = fail)));
    promise.catch(() => undefined);
    this.ready = { promise, resolve, reject };
  }

  // ---- tokens --------------------------------------------------------------------------------------

  private async freshToken(): Promise<string> {
    if (!this.options.getToken) throw new ClientError('InvalidState', 'no token given and no getToken option');
    const token = await this.options.getToken();
    this.token = token;
    this.emit('token', token);
    return token;
  }

  private scheduleTokenRefresh(): void {
    clearTimeout(this.refreshTimer);
    const expiry = this.token ? tokenExpiry(this.token) : null;
    if (!this.options.getToken || expiry === null) return;
    const delay = refreshDelayMs(expiry, Date.now(), this.options.tokenRefreshLeadSeconds ?? 60);
    this.refreshTimer = backgroundTimer(() => {
      this.freshToken().then(
        () => this.scheduleTokenRefresh(),
        (error: unknown) => {
          this.host.reportError(error);
          this.refreshTimer = backgroundTimer(() => this.scheduleTokenRefresh(), 5000);
        },
      );
    }, delay);
  }

  // ---- pushes --------------------------------------------------------------------------------------

  private pushed(push: ServerPush): void {
    // Pushes kept for a resumed session follow its register result: applied once the result is.
    if (this.state !== 'registered') {
      this.heldPushes.push(push);
      return;
    }
    this.applyPush(push);
    (this.emit as (name: string, push: ServerPush) => void)(push.type, push);
    this.emit('push', push);
  }

  private applyPush(push: ServerPush): void {
    const connection =
      'connectionId' in push && push.connectionId ? this.connections.get(push.connectionId) : undefined;
    switch (push.type) {
      case 'settings':
        return connection?.applySettings(push.settings, true);
      case 'connection.state':
        return connection?.applyState(push.state);
      case 'connection.offer':
        return void connection?.renegotiate(push.offer as { type: 'offer'; sdp: string });
      case 'connection.ended':
        return connection?.end(push.reason);
      case 'kicked':
        return push.connectionId ? connection?.end('kicked') : this.channelGone(push.channelId, 'kicked');
      case 'claim.updated':
        return void this.channels.set(push.channelId, { claim: push.claim });
      case 'upstream.opened':
        return this.autoSubscribe(push.channelId, push.upstream);
      case 'message':
      case 'client.updated':
      case 'unregistered':
      case 'upstream.closed':
        return;
      case 'connection.relayed':
        return connection?.relayed(push);
    }
  }

  private channelGone(channelId: string, reason: 'left' | 'kicked'): void {
    this.channels.delete(channelId);
    for (const connection of this.connections.values()) if (connection.channelId === channelId) connection.end(reason);
  }

  private autoSubscribe(channelId: string, upstream: RemoteUpstream): void {
    const wanted = this.options.autoSubscribe;
    if (!wanted || upstream.clientId === this.session?.clientId) return;
    if (typeof wanted === 'function' && !wanted(upstream, channelId)) return;
    const receiving = [...this.connections.values()].some(
      (connection) =>
        connection instanceof DownstreamConnection && connection.remote.connectionId === upstream.connectionId,
    );
    if (receiving) return;
    this.subscribe(channelId, upstream).then(
      (connection) => this.emit('connection', connection),
      (error: unknown) => this.host.reportError(error),
    );
  }

  private createPeerConnection(): PeerConnectionLike {
    const RTCPeerConnection =
      this.options.RTCPeerConnection ?? globalConstructor<PeerConnectionConstructor>('RTCPeerConnection');
    if (!RTCPeerConnection) throw new ClientError('NoPlatform', 'no RTCPeerConnection given and none on globalThis');
    return new RTCPeerConnection({ iceServers: this.session?.iceServers ?? [], ...this.options.peerConnectionConfig });
  }
}

function newId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (crypto?.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}
