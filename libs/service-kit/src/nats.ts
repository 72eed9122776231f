import { Catch, Inject, Injectable, Logger, type ArgumentsHost, type OnApplicationShutdown, type RpcExceptionFilter } from '@nestjs/common';
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
import { ContractViolation, DomainError, isWireError, namespaced, type RequestMap, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { connectable, finalize, isObservable, Subject, tap, throwError, type Observable } from 'rxjs';
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

interface Pending {
  resolve: (msg: Msg) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
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
 * handler's own code otherwise.
 */
@Injectable()
export class NatsClient implements OnApplicationShutdown {
  private readonly logger = new Logger('NatsClient');
  private connection?: Promise<NatsConnection>;
  private nc?: NatsConnection;
  private inbox?: Inbox;
  private seq = 0;
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
      coalesceWrites(nc);
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

  async request<S extends keyof RequestMap>(subject: S, payload: RequestOf<S>, opts: { timeoutMs?: number } = {}): Promise<ResponseOf<S>> {
    const timeout = opts.timeoutMs ?? this.options.requestTimeoutMs;
    const started = performance.now();
    let outcome = 'ok';
    try {
      const nc = this.nc && !this.nc.isClosed() ? this.nc : await this.withDeadline(this.connection$(), timeout, subject);
      const h = natsHeaders();
      h.set(CORRELATION_HEADER, currentCorrelationId() ?? randomUUID());
      const body = JSON.stringify({ pattern: subject, data: payload, id: `${this.idPrefix}-${++this.seq}` });
      const msg = await this.send(nc, this.subject(subject), body, h, timeout).catch((e: unknown) => {
        throw translateNatsError(e, subject, timeout);
      });
      const reply = JSON.parse(decoder.decode(msg.data)) as ReplyPacket;
      if (reply.err !== undefined && reply.err !== null) throw DomainError.fromWire(reply.err);
      return reply.response as ResponseOf<S>;
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
  requestRaw(nc: NatsConnection, subject: string, data: Uint8Array | string, opts: { timeoutMs: number; headers?: MsgHdrs }): Promise<Msg> {
    return this.send(nc, subject, data, opts.headers, opts.timeoutMs);
  }

  private send(nc: NatsConnection, subject: string, data: Uint8Array | string, headers: MsgHdrs | undefined, timeout: number): Promise<Msg> {
    const inbox = this.inboxOf(nc);
    const token = String(++this.seq);
    return new Promise<Msg>((resolve, reject) => {
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
    const settle = (token: string, msg: Msg | null, error?: unknown) => {
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
        // The server answers a request nobody subscribes to with an empty 503 status message.
        if (msg.data.length === 0 && msg.headers?.code === 503) settle(token, null, new NoRespondersError(msg.subject));
        else settle(token, msg);
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

function translateNatsError(e: unknown, subject: string, timeout: number): DomainError {
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
 * not the expected ones (another nats.js version).
 */
export function coalesceWrites(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: ProtocolInternals }).protocol;
  if (!protocol?.outbound || typeof protocol.sendCommand !== 'function' || typeof protocol.flushPending !== 'function' || typeof protocol.pendingLimit !== 'number') return;
  const outbound = protocol.outbound;
  const flush = protocol.flushPending.bind(protocol);
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
 * value (not a stream) are answered directly, in the packet format of Nest's server
 * (`{ response, isDisposed: true, id }`), without the Observable pipeline Nest builds per
 * message; errors (the exception filter's Observable) and streams take Nest's own path. Guards,
 * pipes, interceptors and filters of the handlers run as Nest composes them.
 */
export class NamespacedNatsServer extends ServerNats {
  constructor(
    private readonly ns: NatsOptions & { queue: string },
    private readonly metrics?: Metrics,
    private readonly log?: JsonLogger,
  ) {
    super({ servers: ns.url, name: ns.name, queue: ns.queue, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true, gracefulShutdown: true, gracePeriod: 500 });
  }

  override async createNatsClient() {
    const nc = await super.createNatsClient();
    coalesceWrites(nc as unknown as NatsConnection);
    return nc;
  }

  override bindEvents(client: Parameters<ServerNats['bindEvents']>[0]): void {
    const c = client as { subscribe(subject: string, opts: { queue?: string; callback: (err: unknown, msg: unknown) => unknown }): unknown };
    for (const [pattern, handler] of this.messageHandlers) {
      const queue = (handler.extras?.queue as string | undefined) ?? this.ns.queue;
      const sub = c.subscribe(namespaced(this.ns.namespace, pattern), { queue, callback: this.getMessageHandler(pattern).bind(this) });
      (this as unknown as { subscriptions: unknown[] }).subscriptions.push(sub);
    }
  }

  /** Subscribed patterns are the handlers' keys: no pattern parsing (Nest tries JSON.parse on each). */
  override getHandlerByPattern(pattern: string) {
    return this.messageHandlers.get(pattern) ?? super.getHandlerByPattern(pattern);
  }

  override async handleMessage(channel: string, natsMsg: Msg): Promise<void> {
    const correlationId = natsMsg.headers?.get(CORRELATION_HEADER);
    return runWithCorrelation(correlationId || undefined, () => {
      const message = this.deserializer.deserialize(natsMsg, { channel, replyTo: natsMsg.reply }) as Packet | Promise<Packet>;
      // Nest's NATS deserializer answers at once; a custom one may answer a promise.
      return message instanceof Promise ? message.then((m) => this.dispatch(channel, natsMsg, m)) : this.dispatch(channel, natsMsg, message);
    });
  }

  private dispatch(channel: string, natsMsg: Msg, message: Packet): Promise<void> | void {
    const handler = this.getHandlerByPattern(channel);
    if (!handler) return super.handleMessage(channel, natsMsg);
    const subject = natsMsg.subject;
    const ctx = new NatsContext([subject, natsMsg.headers]);
    const started = performance.now();
    let counted = false;
    const done = (outcome: HandlerOutcome) => {
      if (counted) return;
      counted = true;
      this.metrics?.natsHandled.inc({ subject, outcome });
      this.log?.event('debug', 'handled NATS request', { subject, outcome, ms: Math.round((performance.now() - started) * 10) / 10 });
    };
    const watch = <T>(result$: Observable<T>) => result$.pipe(tap({ error: (e: unknown) => done(outcomeOfWire(e)), complete: () => done('ok') }));

    if (message.id === undefined) {
      // An event: no answer; its handlers run as in Nest's server.
      return this.runWithProcessingHooks(ctx, async (runEndHook) => {
        const result: unknown = await handler(message.data, ctx);
        if (isObservable(result)) {
          connectable(watch(result).pipe(finalize(runEndHook)), { connector: () => new Subject(), resetOnDisconnect: false }).connect();
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
        natsMsg.respond(JSON.stringify({ response: result, isDisposed: true, id }));
      } catch (err) {
        // A reply that cannot be published must not surface as an unhandled rejection.
        this.logger.error(err);
      }
    });
  }
}

/** Every error leaving a NATS handler becomes a typed WireError; unexpected ones are logged, not leaked. */
@Catch()
export class RpcErrorFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('RpcErrorFilter');

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    if (exception instanceof DomainError) return throwError(() => exception.toWire());
    if (exception instanceof ContractViolation)
      return throwError(() => new DomainError('ValidationFailed', exception.message, exception.errors).toWire());
    this.logger.error(exception instanceof Error ? exception : String(exception));
    return throwError(() => new DomainError('Internal', 'internal error').toWire());
  }
}
