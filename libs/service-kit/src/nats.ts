import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  connect,
  createInbox,
  NoRespondersError,
  TimeoutError,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';
import { DomainError, namespaced, type RequestMap, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import { CORRELATION_HEADER, currentCorrelationId } from './correlation.js';
import { Metrics } from './metrics.js';
import {
  addPart,
  coalesceWrites,
  readJsonText,
  REPLY_PART_HEADER,
  singleHeader,
  translateNatsError,
  type Pending,
  type RawRequest,
  type ReplyMsg,
  type ReplyPacket,
} from './nats-wire.js';

const decoder = new TextDecoder();

export interface NatsOptions {
  url: string;
  namespace: string;
  requestTimeoutMs: number;
  /** Connection name shown by the NATS server (`<service>-<pid>`). */
  name: string;
}

export const NATS_OPTIONS = Symbol('NATS_OPTIONS');
/** The reply inbox of a connection: one wildcard subscription, one entry per request in flight. */
interface Inbox {
  nc: NatsConnection;
  prefix: string;
  pending: Map<string, Pending>;
}

/**
 * Typed request/reply client in Nest's packet format, over one reply inbox per connection; every
 * call has a timeout and fails as a DomainError (service-kit README, "NATS client").
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
   * `shareWithinTurn` (reads only): an identical call in the same event-loop turn shares this
   * call's answer; why that is safe is in the service-kit README ("Shared reads").
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
    const results: Array<PromiseSettledResult<ReplyMsg>> = [];
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
      for (const token of Array.from(inbox.pending.keys())) settle(token, null, new Error('connection closed'));
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
