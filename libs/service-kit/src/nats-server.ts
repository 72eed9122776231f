import { NatsContext, ServerNats } from '@nestjs/microservices';
import { callbackify } from 'node:util';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { isWireError, namespaced } from '@switchboard/contracts';
import { connectable, finalize, isObservable, Subject, tap, type Observable } from 'rxjs';
import { CORRELATION_HEADER, runWithCorrelation } from './correlation.js';
import { JsonLogger } from './logger.js';
import { Metrics } from './metrics.js';
import type { NatsOptions } from './nats.js';
import { coalesceWrites, replyPacket, respondInParts } from './nats-wire.js';

/** `ok`, or the error code a handler answered with. */
type HandlerOutcome = string;

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
 * deployments sharing a NATS stay apart; the queue group is the service name. Plain answers skip
 * Nest's per-message Observable pipeline (service-kit README, "NATS server").
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
    // callbackify calls back outside the promise chain, so a throwing callback is not swallowed.
    callbackify(() => this.connection!.flush())((err) => callback(err ?? undefined));
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
    this.handleMessage(pattern, msg).catch((e: unknown) => this.handleError(e as string));
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
