import { Catch, Inject, Injectable, Logger, type ArgumentsHost, type CallHandler, type ExecutionContext, type NestInterceptor, type OnApplicationShutdown, type RpcExceptionFilter } from '@nestjs/common';
import { ServerNats, type NatsContext } from '@nestjs/microservices';
import {
  connect,
  headers as natsHeaders,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type NatsConnection,
} from '@nats-io/transport-node';
import { ContractViolation, DomainError, namespaced, type RequestMap, type RequestOf, type ResponseOf } from '@switchboard/contracts';
import { Observable, throwError } from 'rxjs';
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
 * Typed request/reply client. Uses the connection's shared reply inbox (one subscription for all
 * requests) instead of a subscription per request, and speaks the packet format of Nest's NATS
 * server so handlers are plain `@MessagePattern`s. Every call has a timeout; failures arrive as
 * DomainError: `Unavailable` when nobody answers the subject, `Timeout` when the answer is late,
 * and the handler's own code otherwise.
 */
@Injectable()
export class NatsClient implements OnApplicationShutdown {
  private readonly logger = new Logger('NatsClient');
  private connection?: Promise<NatsConnection>;
  private nc?: NatsConnection;

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
      const nc = await this.withDeadline(this.connection$(), timeout, subject);
      const h = natsHeaders();
      h.set(CORRELATION_HEADER, currentCorrelationId() ?? randomUUID());
      const body = encoder.encode(JSON.stringify({ pattern: subject, data: payload, id: randomUUID() }));
      const msg = await nc.request(this.subject(subject), body, { timeout, headers: h }).catch((e: unknown) => {
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

/**
 * Nest's NATS server with the deployment namespace in front of every subscribed subject, so
 * handlers keep the catalog's subject names while deployments sharing a NATS stay apart.
 * The queue group (one replica answers) is the service name.
 */
export class NamespacedNatsServer extends ServerNats {
  constructor(private readonly ns: NatsOptions & { queue: string }) {
    super({ servers: ns.url, name: ns.name, queue: ns.queue, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true, gracefulShutdown: true, gracePeriod: 500 });
  }

  override bindEvents(client: Parameters<ServerNats['bindEvents']>[0]): void {
    const c = client as { subscribe(subject: string, opts: { queue?: string; callback: (err: unknown, msg: unknown) => unknown }): unknown };
    for (const [pattern, handler] of this.messageHandlers) {
      const queue = (handler.extras?.queue as string | undefined) ?? this.ns.queue;
      const sub = c.subscribe(namespaced(this.ns.namespace, pattern), { queue, callback: this.getMessageHandler(pattern).bind(this) });
      (this as unknown as { subscriptions: unknown[] }).subscriptions.push(sub);
    }
  }
}

/** Runs each NATS handler inside the caller's correlation id and counts outcomes. */
@Injectable()
export class RpcContextInterceptor implements NestInterceptor {
  constructor(
    private readonly metrics: Metrics,
    private readonly logger: JsonLogger,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const ctx = context.switchToRpc().getContext<NatsContext>();
    const correlationId = ctx.getHeaders()?.get(CORRELATION_HEADER);
    const subject = ctx.getSubject();
    const started = performance.now();
    const done = (outcome: string) => {
      this.metrics.natsHandled.inc({ subject, outcome });
      this.logger.event('debug', 'handled NATS request', { subject, outcome, ms: Math.round((performance.now() - started) * 10) / 10 });
    };
    return new Observable((subscriber) =>
      runWithCorrelation(correlationId || undefined, () =>
        next.handle().subscribe({
          next: (v) => subscriber.next(v),
          error: (e: unknown) => {
            done(e instanceof DomainError ? e.code : e instanceof ContractViolation ? 'ValidationFailed' : 'Internal');
            subscriber.error(e);
          },
          complete: () => {
            done('ok');
            subscriber.complete();
          },
        }),
      ),
    );
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
