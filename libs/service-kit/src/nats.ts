import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { NatsContext, ServerNats } from '@nestjs/microservices';
import {
  connect,
  createInbox,
  headers as natsHeaders,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';
import {
  DomainError,
  isWireError,
  namespaced,
  type RequestMap,
  type RequestOf,
  type ResponseOf,
} from '@switchboard/contracts';
import { connectable, finalize, isObservable, Subject, tap, type Observable } from 'rxjs';
import { randomUUID } from 'node:crypto';
import { CORRELATION_HEADER, currentCorrelationId, runWithCorrelation } from './correlation.js';
import { JsonLogger } from './logger.js';
import { Metrics } from './metrics.js';

export interface NatsOptions {
  url: string;
  namespace: string;
  requestTimeoutMs: number;
  /** Connection name shown by the NATS server (`<service>-<pid>`). */
  name: string;
}

export const NATS_OPTIONS = Symbol('NATS_OPTIONS');

/** Nest's NATS packet shapes: requests are `{ pattern, data, id }`, replies `{ id, response | err, isDisposed }`. */
interface ReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A reply larger than the server's `max_payload` goes out as several messages on the reply
 * subject, each with this header: `<index>/<count>` (1-based). NATS keeps the order of one
 * publisher's messages, so the requester joins the parts as they come.
 */
export const REPLY_PART_HEADER = 'Sb-Reply-Part';
/** Room left in each part for its header (`NATS/1.0`, the part header, CRLFs). */
const PART_HEADER_ROOM = 128;

/** What a request resolves with: one message, or the parts of a split reply joined. */
export type ReplyMsg = Pick<Msg, 'data' | 'headers'>;

interface Pending {
  resolve: (msg: ReplyMsg) => void;
  reject: (e: unknown) => void;
  /** Its own timer; none for a request of `requestRawMany` (its batch has one timer for all). */
  timer?: NodeJS.Timeout;
  /** Parts of a split reply received so far. */
  parts?: Uint8Array[];
}

/** Printable ASCII only: a value that can go into a hand-encoded header line as it is. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * Headers of ONE field for a publish, encoded by hand when the value is printable ASCII: nats.js
 * only calls `encode()` on the headers of a published message, and its own MsgHdrs validates and
 * re-encodes every field on every publish, which hot paths (the correlation id of every request,
 * JetStream's `Nats-Msg-Id` of every event) do not need. Anything else goes through nats.js' own
 * headers.
 */
export function singleHeader(name: string, value: string): MsgHdrs {
  if (HEADER_VALUE.test(value)) return new FieldHeader(name, value) as unknown as MsgHdrs;
  const h = natsHeaders();
  h.set(name, value);
  return h;
}

class FieldHeader {
  constructor(
    private readonly name: string,
    private readonly value: string,
  ) {}
  encode(): Uint8Array {
    return Buffer.from(`NATS/1.0\r\n${this.name}: ${this.value}\r\n\r\n`, 'latin1');
  }
}

/** One request of `NatsClient.requestRawMany`. */
export interface RawRequest {
  subject: string;
  data: Uint8Array | string;
  headers?: MsgHdrs;
}

/**
 * The reply packet of a handler that answered `value`, in Nest's format with `response` last:
 * `{"id":…,"isDisposed":true,"response":<value>}`. The requester can then take the answer's JSON
 * text as it is (see `NatsClient.requestJson`) instead of parsing and re-serializing it.
 */
export function replyPacket(id: string, value: unknown): string {
  const head = `{"id":${JSON.stringify(id)},"isDisposed":true`;
  const json = value === undefined ? undefined : JSON.stringify(value);
  return json === undefined ? `${head}}` : `${head},"response":${json}}`;
}

/** The JSON text of `response` when `data` is `replyPacket(id, …)` of a value, else undefined. */
function responseText(data: Uint8Array, id: string): Buffer | undefined {
  const head = `{"id":${JSON.stringify(id)},"isDisposed":true,"response":`;
  const n = head.length;
  // Request ids are ASCII (`idPrefix-seq`), so the head's bytes are its characters.
  if (data.length <= n + 1 || data[data.length - 1] !== 0x7d) return undefined;
  for (let i = 0; i < n; i++) if (data[i] !== head.charCodeAt(i)) return undefined;
  return Buffer.from(data.buffer, data.byteOffset + n, data.length - n - 1);
}

/** The answer of a `requestJson` exchange: its JSON text as the handler serialized it. */
function readJsonText(data: Uint8Array, id: string): Buffer {
  const text = responseText(data, id);
  if (text) return text;
  const reply = JSON.parse(decoder.decode(data)) as ReplyPacket;
  if (reply.err !== undefined && reply.err !== null) throw DomainError.fromWire(reply.err);
  return reply.response === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(reply.response));
}

/**
 * Publishes a reply; one larger than the server's max_payload is split into parts
 * (REPLY_PART_HEADER) instead of failing.
 */
export function respondInParts(msg: Msg, data: Uint8Array, maxPayload: number | undefined): void {
  if (!maxPayload || data.length <= maxPayload) {
    msg.respond(data);
    return;
  }
  const size = Math.max(1, maxPayload - PART_HEADER_ROOM);
  const count = Math.ceil(data.length / size);
  for (let i = 0; i < count; i++) {
    const h = natsHeaders();
    h.set(REPLY_PART_HEADER, `${i + 1}/${count}`);
    msg.respond(data.subarray(i * size, Math.min(data.length, (i + 1) * size)), { headers: h });
  }
}

/** The reply inbox of a connection: one wildcard subscription, one entry per request in flight. */
interface Inbox {
  nc: NatsConnection;
  prefix: string;
  pending: Map<string, Pending>;
}

/**
 * Typed request/reply client. Every request goes out with a reply subject under the connection's
 * own inbox (one wildcard subscription for all requests, like nats.js' muxed requests, but with
 * one timer and one map entry per request and nothing else: no per-request error object or
 * promise race on the hot path). It speaks the packet format of Nest's NATS server so handlers are
 * plain `@MessagePattern`s. Every call has a timeout; failures arrive as DomainError:
 * `Unavailable` when nobody answers the subject, `Timeout` when the answer is late, and the
 * handler's own code otherwise. A reply that came in parts (larger than the server's max_payload,
 * see `respondInParts`) is joined before it is read.
 */
@Injectable()
export class NatsClient implements OnApplicationShutdown {
  private readonly logger = new Logger('NatsClient');
  private connection?: Promise<NatsConnection>;
  private nc?: NatsConnection;
  private inbox?: Inbox;
  private seq = 0;
  /** Reads sent in this event-loop turn with `shareWithinTurn`, by subject and payload text. */
  private readonly turnReads = new Map<string, Promise<Buffer>>();
  private writes = 0;
  private readonly onWrite = () => {
    this.writes++;
    if (this.turnReads.size > 0) this.turnReads.clear();
  };
  /** Whether writes wait for the end of the turn (`coalesceWrites`), which sharing reads relies on. */
  private sharesTurnReads = false;
  /** Request ids: unique per process run (`<random>-<counter>`), cheaper than a UUID each. */
  private readonly idPrefix = randomUUID().slice(0, 8);

  constructor(
    @Inject(NATS_OPTIONS) private readonly options: NatsOptions,
    private readonly metrics: Metrics,
  ) {}

  /** Connects in the background and keeps reconnecting forever; callers wait at most their timeout. */
  connection$(): Promise<NatsConnection> {
    this.connection ??= connect({
      servers: this.options.url,
      name: this.options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      waitOnFirstConnect: true,
      timeout: 2000,
      // Building an async stack trace per request costs measurable CPU on the hot path.
      noAsyncTraces: true,
    }).then((nc) => {
      this.sharesTurnReads = coalesceWrites(nc, this.onWrite);
      this.nc = nc;
      void (async () => {
        for await (const s of nc.status()) {
          if (s.type === 'disconnect' || s.type === 'reconnect') this.logger.warn(`NATS ${s.type}`);
        }
      })();
      return nc;
    });
    return this.connection;
  }

  /** Throws when NATS is not connected (readiness). */
  async ping(): Promise<void> {
    if (!this.nc || this.nc.isClosed()) throw new Error('not connected to NATS');
    await this.nc.flush();
  }

  subject(name: string): string {
    return namespaced(this.options.namespace, name);
  }

  async request<S extends keyof RequestMap>(
    subject: S,
    payload: RequestOf<S>,
    opts: { timeoutMs?: number } = {},
  ): Promise<ResponseOf<S>> {
    return this.exchange(subject, JSON.stringify(payload), opts.timeoutMs, (data) => {
      const reply = JSON.parse(decoder.decode(data)) as ReplyPacket;
      if (reply.err !== undefined && reply.err !== null) throw DomainError.fromWire(reply.err);
      return reply.response as ResponseOf<S>;
    });
  }

  /**
   * Like `request`, but resolves with the JSON text of the answer (UTF-8), not a parsed value:
   * for answers that are passed on as they are (interface A reads become HTTP bodies). A reply of
   * NamespacedNatsServer is sliced, not parsed; any other layout (another responder) is parsed and
   * re-serialized, which gives the same text. An answer of `undefined` is an empty buffer.
   *
   * `shareWithinTurn` is for reads: a call identical to one made earlier in the same event-loop
   * turn (same subject, same payload text) gets that call's answer (the same Buffer, or the same
   * error) instead of sending a request of its own. Every such call arrived before the shared
   * request was written (the sharing ends with each write, see `coalesceWrites`; without it
   * nothing is shared), so its answer is one it could have had from a request of its own;
   * what differs is one correlation id for the group in the answering service's logs. Counted in
   * `nats_requests_shared_total`.
   */
  requestJson<S extends keyof RequestMap>(
    subject: S,
    payload: RequestOf<S>,
    opts: { timeoutMs?: number; shareWithinTurn?: boolean } = {},
  ): Promise<Buffer> {
    const data = JSON.stringify(payload);
    if (!opts.shareWithinTurn || !this.sharesTurnReads)
      return this.exchange(subject, data, opts.timeoutMs, readJsonText);
    const key = `${subject} ${data}`;
    const shared = this.turnReads.get(key);
    if (shared) {
      this.metrics.natsRequestsShared.inc({ subject });
      return shared;
    }
    const writes = this.writes;
    const read = this.exchange(subject, data, opts.timeoutMs, readJsonText);
    // Not when sending it made the client write at once (its buffer was full).
    if (writes === this.writes) this.turnReads.set(key, read);
    return read;
  }

  /**
   * One request in Nest's packet format (`data` is the payload's JSON text, undefined for none):
   * correlation header, timeout, error mapping, metrics.
   */
  private async exchange<T>(
    subject: string,
    data: string | undefined,
    timeoutMs: number | undefined,
    read: (data: Uint8Array, id: string) => T,
  ): Promise<T> {
    const timeout = timeoutMs ?? this.options.requestTimeoutMs;
    const started = performance.now();
    let outcome = 'ok';
    try {
      const nc =
        this.nc && !this.nc.isClosed() ? this.nc : await this.withDeadline(this.connection$(), timeout, subject);
      // The id went through `acceptCorrelationId` or is a UUID: printable ASCII, no CR or LF.
      const h = singleHeader(CORRELATION_HEADER, currentCorrelationId() ?? randomUUID());
      const id = `${this.idPrefix}-${++this.seq}`;
      // Buffer.from takes small strings from Node's pool: cheaper than nats.js' TextEncoder.
      const body = Buffer.from(
        `{"pattern":${JSON.stringify(subject)}${data === undefined ? '' : `,"data":${data}`},"id":"${id}"}`,
      );
      let msg: ReplyMsg;
      try {
        msg = await this.send(nc, this.subject(subject), body, h, timeout);
      } catch (e) {
        throw translateNatsError(e, subject, timeout);
      }
      return read(msg.data, id);
    } catch (e) {
      outcome = e instanceof DomainError ? e.code : 'Internal';
      throw e instanceof DomainError ? e : new DomainError('Internal', `request ${subject} failed`);
    } finally {
      this.metrics.natsRequestDuration.observe({ subject, outcome }, (performance.now() - started) / 1000);
    }
  }

  /**
   * A raw request on a full subject (no namespace, no packet format): resolves with the reply
   * message; rejects with a nats.js TimeoutError / NoRespondersError, or the publish error.
   */
  requestRaw(
    nc: NatsConnection,
    subject: string,
    data: Uint8Array | string,
    opts: { timeoutMs: number; headers?: MsgHdrs },
  ): Promise<ReplyMsg> {
    return this.send(nc, subject, data, opts.headers, opts.timeoutMs);
  }

  /**
   * Several raw requests published in order, in one go, with ONE timer for all of them (not one
   * timer and one promise each): resolves, once every request is answered or the timeout passed,
   * with one outcome per request in the order given (the reply message, or the same errors
   * `requestRaw` rejects with: TimeoutError, NoRespondersError, the publish error). For bursts of
   * requests that are awaited together, such as the JetStream publishes of one operation.
   */
  requestRawMany(
    nc: NatsConnection,
    requests: readonly RawRequest[],
    opts: { timeoutMs: number },
  ): Promise<Array<PromiseSettledResult<ReplyMsg>>> {
    const results = new Array<PromiseSettledResult<ReplyMsg>>(requests.length);
    if (requests.length === 0) return Promise.resolve(results);
    const inbox = this.inboxOf(nc);
    return new Promise((resolve) => {
      let left = requests.length;
      const tokens: string[] = [];
      const done = (i: number, outcome: PromiseSettledResult<ReplyMsg>) => {
        if (results[i]) return;
        results[i] = outcome;
        if (--left === 0) {
          clearTimeout(timer);
          resolve(results);
        }
      };
      const timer = setTimeout(() => {
        for (let i = 0; i < tokens.length; i++) {
          if (results[i]) continue;
          inbox.pending.delete(tokens[i]!);
          done(i, { status: 'rejected', reason: new TimeoutError() });
        }
      }, opts.timeoutMs);
      for (let i = 0; i < requests.length; i++) {
        const r = requests[i]!;
        const token = String(++this.seq);
        tokens.push(token);
        inbox.pending.set(token, {
          resolve: (value) => done(i, { status: 'fulfilled', value }),
          reject: (reason) => done(i, { status: 'rejected', reason }),
        });
        try {
          nc.publish(r.subject, r.data, { reply: inbox.prefix + token, headers: r.headers });
        } catch (e) {
          inbox.pending.delete(token);
          done(i, { status: 'rejected', reason: e });
        }
      }
    });
  }

  private send(
    nc: NatsConnection,
    subject: string,
    data: Uint8Array | string,
    headers: MsgHdrs | undefined,
    timeout: number,
  ): Promise<ReplyMsg> {
    const inbox = this.inboxOf(nc);
    const token = String(++this.seq);
    return new Promise<ReplyMsg>((resolve, reject) => {
      const timer = setTimeout(() => {
        inbox.pending.delete(token);
        reject(new TimeoutError());
      }, timeout);
      inbox.pending.set(token, { resolve, reject, timer });
      try {
        nc.publish(subject, data, { reply: inbox.prefix + token, headers });
      } catch (e) {
        clearTimeout(timer);
        inbox.pending.delete(token);
        reject(e);
      }
    });
  }

  private inboxOf(nc: NatsConnection): Inbox {
    if (this.inbox?.nc === nc) return this.inbox;
    const inbox: Inbox = { nc, prefix: `${createInbox()}.`, pending: new Map() };
    const settle = (token: string, msg: ReplyMsg | null, error?: unknown) => {
      const p = inbox.pending.get(token);
      if (!p) return;
      inbox.pending.delete(token);
      clearTimeout(p.timer);
      if (msg) p.resolve(msg);
      else p.reject(error);
    };
    nc.subscribe(`${inbox.prefix}*`, {
      callback: (err, msg) => {
        if (err) return;
        const token = msg.subject.slice(inbox.prefix.length);
        const h = msg.headers;
        if (!h) return settle(token, msg);
        // The server answers a request nobody subscribes to with an empty 503 status message.
        if (msg.data.length === 0 && h.code === 503) return settle(token, null, new NoRespondersError(msg.subject));
        const part = h.get(REPLY_PART_HEADER);
        if (!part) return settle(token, msg);
        const joined = addPart(inbox.pending.get(token), part, msg.data);
        if (joined instanceof Error) settle(token, null, joined);
        else if (joined) settle(token, { data: joined, headers: undefined });
      },
    });
    // A closed connection answers nothing more: fail what still waits (a new connection gets a new inbox).
    void nc.closed().then(() => {
      for (const token of [...inbox.pending.keys()]) settle(token, null, new Error('connection closed'));
    });
    this.inbox = inbox;
    return inbox;
  }

  private withDeadline<T>(p: Promise<T>, ms: number, subject: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const t = setTimeout(() => reject(new DomainError('Unavailable', `messaging is unavailable (${subject})`)), ms);
      p.then(
        (v) => {
          clearTimeout(t);
          resolve(v);
        },
        () => {
          clearTimeout(t);
          reject(new DomainError('Unavailable', `messaging is unavailable (${subject})`));
        },
      );
    });
  }

  async onApplicationShutdown() {
    if (this.nc && !this.nc.isClosed()) await this.nc.drain().catch(() => undefined);
  }
}

/** Keeps one part of a split reply; the whole reply once its last part came. */
function addPart(p: Pending | undefined, part: string, data: Uint8Array): Uint8Array | Error | undefined {
  if (!p) return undefined;
  const [index, count] = part.split('/').map(Number);
  // A copy: the part is a view of the connection's read buffer.
  (p.parts ??= []).push(data.slice());
  if (index !== count) return undefined;
  if (p.parts.length !== count) return new Error(`a split reply lost parts (${p.parts.length} of ${count} arrived)`);
  return Buffer.concat(p.parts);
}

export function translateNatsError(e: unknown, subject: string, timeout: number): DomainError {
  const cause = e instanceof RequestError ? (e.cause ?? e) : e;
  if (cause instanceof NoRespondersError || (e instanceof RequestError && e.isNoResponders()))
    return new DomainError('Unavailable', `no instance of the service answering ${subject} is running`);
  if (cause instanceof TimeoutError) return new DomainError('Timeout', `no answer to ${subject} within ${timeout} ms`);
  return new DomainError('Unavailable', `messaging failed for ${subject}`);
}

interface ProtocolInternals {
  outbound?: { fill(buf: Uint8Array, ...payloads: Uint8Array[]): void; size(): number };
  pendingLimit?: number;
  sendCommand?: (cmd: string | Uint8Array, ...payloads: Uint8Array[]) => void;
  flushPending?: () => void;
}

/**
 * nats.js writes what was sent during one microtask checkpoint in one socket write; a server
 * answering many concurrent HTTP requests (each its own I/O callback) then makes one write per
 * request. This moves the flush to `setImmediate`, after the I/O callbacks of the current event
 * loop turn: everything sent in that turn goes out in one write (the same idea as ioredis' auto
 * pipelining). Nothing else changes: a full buffer still flushes at once, `flush()` (PING) still
 * writes immediately, and messages keep their order. Left as is when the client's internals are
 * not the expected ones (another nats.js version): then it answers false. `onFlush` runs before
 * every write of what was sent, whichever path makes it.
 */
export function coalesceWrites(nc: NatsConnection, onFlush?: () => void): boolean {
  const protocol = (nc as unknown as { protocol?: ProtocolInternals }).protocol;
  if (
    !protocol?.outbound ||
    typeof protocol.sendCommand !== 'function' ||
    typeof protocol.flushPending !== 'function' ||
    typeof protocol.pendingLimit !== 'number'
  )
    return false;
  const outbound = protocol.outbound;
  const flushPending = protocol.flushPending.bind(protocol);
  const flush = onFlush
    ? () => {
        onFlush();
        flushPending();
      }
    : flushPending;
  // Every write of what was sent goes through flushPending (also `flush()` and reconnects).
  protocol.flushPending = flush;
  let scheduled = false;
  const flushScheduled = () => {
    scheduled = false;
    flush();
  };
  protocol.sendCommand = (cmd, ...payloads) => {
    outbound.fill(typeof cmd === 'string' ? encoder.encode(cmd) : cmd, ...payloads);
    if (outbound.size() >= protocol.pendingLimit!) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flushScheduled);
    }
  };
  return true;
}

type HandlerOutcome = 'ok' | string;

/** A request or event as Nest's NATS deserializer reads it. */
interface Packet {
  id?: string;
  data?: unknown;
}

/** The outcome label of a WireError a handler's exception filter produced. */
function outcomeOfWire(e: unknown): HandlerOutcome {
  return isWireError(e) ? e.code : 'Internal';
}

/**
 * Nest's NATS server with the deployment namespace in front of every subscribed subject, so
 * handlers keep the catalog's subject names while deployments sharing a NATS stay apart.
 * The queue group (one replica answers) is the service name.
 *
 * Every message is handled inside the caller's correlation id (`x-correlation-id` header) and
 * counted (`nats_requests_handled_total{subject,outcome}`). Requests whose handler answers a
 * value (not a stream) are answered directly, in the packet format of Nest's server with the
 * answer last (`replyPacket`: serialized once, and passed on as text by `requestJson`), without
 * the Observable pipeline Nest builds per message; an answer larger than the server's
 * max_payload goes in parts (`respondInParts`). Errors (the exception filter's Observable) and
 * streams take Nest's own path. Guards, pipes, interceptors and filters of the handlers run as
 * Nest composes them.
 */
export class NamespacedNatsServer extends ServerNats {
  constructor(
    private readonly ns: NatsOptions & { queue: string },
    private readonly metrics?: Metrics,
    private readonly log?: JsonLogger,
  ) {
    super({
      servers: ns.url,
      name: ns.name,
      queue: ns.queue,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      waitOnFirstConnect: true,
      gracefulShutdown: true,
      gracePeriod: 500,
    });
  }

  /** The server's connection (max_payload of replies). */
  private connection?: NatsConnection;

  override async createNatsClient() {
    const nc = await super.createNatsClient();
    coalesceWrites(nc as unknown as NatsConnection);
    this.connection = nc as unknown as NatsConnection;
    return nc;
  }

  /**
   * Ready only once the NATS server holds every subscription: a request sent the moment
   * `startAllMicroservices()` resolves (a test, a peer that saw this replica's health turn
   * green) would otherwise find no responders while the SUB lines are still in the write buffer.
   */
  override start(callback: (err?: unknown) => void): void {
    this.bindEvents((this as unknown as { natsClient: Parameters<ServerNats['bindEvents']>[0] }).natsClient);
    this.connection!.flush().then(
      () => callback(),
      (e: unknown) => callback(e),
    );
  }

  override bindEvents(client: Parameters<ServerNats['bindEvents']>[0]): void {
    const c = client as {
      subscribe(subject: string, opts: { queue?: string; callback: (err: unknown, msg: unknown) => unknown }): unknown;
    };
    for (const [pattern, handler] of this.messageHandlers) {
      const queue = (handler.extras?.queue as string | undefined) ?? this.ns.queue;
      const sub = c.subscribe(namespaced(this.ns.namespace, pattern), {
        queue,
        callback: (err, msg) => this.onMessage(pattern, err, msg as Msg),
      });
      (this as unknown as { subscriptions: unknown[] }).subscriptions.push(sub);
    }
  }

  /** Nest's message callback without its extra async wrapper per message (one promise less). */
  private onMessage(pattern: string, err: unknown, msg: Msg): void {
    if (err) {
      this.logger.error(err);
      return;
    }
    const handled = this.handleMessage(pattern, msg);
    if (handled) handled.catch((e: unknown) => this.handleError(e as string));
  }

  /** Subscribed patterns are the handlers' keys: no pattern parsing (Nest tries JSON.parse on each). */
  override getHandlerByPattern(pattern: string) {
    return this.messageHandlers.get(pattern) ?? super.getHandlerByPattern(pattern);
  }

  override async handleMessage(channel: string, natsMsg: Msg): Promise<void> {
    const correlationId = natsMsg.headers?.get(CORRELATION_HEADER);
    return runWithCorrelation(correlationId || undefined, () => {
      const message = this.deserializer.deserialize(natsMsg, { channel, replyTo: natsMsg.reply }) as
        Packet | Promise<Packet>;
      // Nest's NATS deserializer answers at once; a custom one may answer a promise.
      return message instanceof Promise
        ? message.then((m) => this.dispatch(channel, natsMsg, m))
        : this.dispatch(channel, natsMsg, message);
    });
  }

  private dispatch(channel: string, natsMsg: Msg, message: Packet): Promise<void> | void {
    const handler = this.getHandlerByPattern(channel);
    if (!handler) return super.handleMessage(channel, natsMsg);
    const subject = natsMsg.subject;
    const ctx = new NatsContext([subject, natsMsg.headers]);
    const debug = this.log?.enabled('debug') ?? false;
    const started = debug ? performance.now() : 0;
    let counted = false;
    const done = (outcome: HandlerOutcome) => {
      if (counted) return;
      counted = true;
      this.metrics?.natsHandled.inc({ subject, outcome });
      if (debug)
        this.log!.event('debug', 'handled NATS request', {
          subject,
          outcome,
          ms: Math.round((performance.now() - started) * 10) / 10,
        });
    };
    const watch = <T>(result$: Observable<T>) =>
      result$.pipe(tap({ error: (e: unknown) => done(outcomeOfWire(e)), complete: () => done('ok') }));

    if (message.id === undefined) {
      // An event: no answer; its handlers run as in Nest's server.
      return this.runWithProcessingHooks(ctx, async (runEndHook) => {
        const result: unknown = await handler(message.data, ctx);
        if (isObservable(result)) {
          connectable(watch(result).pipe(finalize(runEndHook)), {
            connector: () => new Subject(),
            resetOnDisconnect: false,
          }).connect();
        } else {
          done('ok');
          runEndHook();
        }
      });
    }

    const id = message.id;
    return this.runWithProcessingHooks(ctx, async (runEndHook) => {
      const result: unknown = await handler(message.data, ctx);
      if (isObservable(result)) {
        this.send(watch(result).pipe(finalize(runEndHook)), this.getPublisher(natsMsg, id, ctx));
        return;
      }
      done('ok');
      runEndHook();
      if (!natsMsg.reply) return;
      try {
        respondInParts(natsMsg, Buffer.from(replyPacket(id, result)), this.connection?.info?.max_payload);
      } catch (err) {
        // A reply that cannot be published must not surface as an unhandled rejection.
        this.logger.error(err);
      }
    });
  }
}
