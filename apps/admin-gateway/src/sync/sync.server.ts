import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  DomainError,
  EdgeValidators,
  SYNC_CLOSE_CODES,
  SYNC_PATH,
  SYNC_REQUEST_DATA,
  validator,
  type FieldError,
  type SyncRequestFrame,
  type SyncRequestType,
  type EdgeOutcome,
  type Validator,
} from '@switchboard/contracts';
import { JsonLogger, runWithCorrelation, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { TSchema } from '@sinclair/typebox';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { GatewayConfig } from '../config.js';
import type { ClientSession } from './client-session.js';
import { SessionStore } from './session.store.js';
import { EdgeClient } from './edge.client.js';
import { syncRefusal } from './sync.errors.js';
import { isSignalling, SyncHandlers } from './sync.handlers.js';
import { AWAIT_ANSWERS, type Step } from './sync-step.js';
import { SyncMetrics } from './sync.metrics.js';
import { SyncSocket, type QueuedFrame, type RefusedFrame } from './sync-socket.js';
import { RegisterDeadlines } from './register-deadlines.js';

const SLOW_CONSUMER_TERMINATE_MS = 2000;
/** Most requests of one socket handled together (one sequence of an edge batch). */
const MAX_BATCH_REQUESTS = 64;
/** What a report adds to the frame it comes from (client ids, gateway id, claims of a register). */
const REPORT_OVERHEAD_BYTES = 512;
const SHUTDOWN_CLOSE_WAIT_MS = 1000;
/** Requests that leave the edge state as it is (a batch of only these does not hold its session). */
const READ_ONLY_REQUESTS: ReadonlySet<SyncRequestType> = new Set(['ping', 'stats', 'message']);

/** A request of a batch as it goes: prepared (`step`) or refused (`error`), then the registry's `outcome`. */
interface BatchEntry {
  frame: QueuedFrame;
  step?: Step;
  error?: unknown;
  outcome?: EdgeOutcome;
}

/**
 * The `/sync` WebSocket endpoint on the gateway's HTTP server (same port). Reads frames, checks
 * them against the frame schemas, runs them through SyncHandlers one at a time per socket, writes
 * result and error frames, pings sockets, times out sockets that never register, and hands dropped
 * sockets to the SessionStore (grace period). Protocol: docs/sync-protocol.md.
 */
@Injectable()
export class SyncServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private webSocketServer?: WebSocketServer;
  private readonly sockets = new Set<SyncSocket>();
  private accepting = true;
  private pingTimer?: NodeJS.Timeout;
  private readonly dataValidators: Record<SyncRequestType, Validator<TSchema>>;
  private server?: Server;
  /** Sockets that have not registered yet: closed with 4008 when their time is up. */
  private readonly registerDeadlines: RegisterDeadlines<SyncSocket>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly handlers: SyncHandlers,
    private readonly edge: EdgeClient,
    private readonly store: SessionStore,
    private readonly metrics: SyncMetrics,
    private readonly logger: JsonLogger,
  ) {
    this.dataValidators = Object.fromEntries(
      Object.entries(SYNC_REQUEST_DATA).map(([type, schema]) => [type, validator(schema as TSchema)]),
    ) as Record<SyncRequestType, Validator<TSchema>>;
    this.registerDeadlines = new RegisterDeadlines(config.syncRegisterTimeoutMs, (socket) =>
      this.registerTimedOut(socket),
    );
  }

  get socketCount(): number {
    return this.sockets.size;
  }

  onApplicationBootstrap() {
    this.webSocketServer = new WebSocketServer({
      noServer: true,
      maxPayload: this.config.syncMaxFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
    this.pingTimer = setInterval(() => this.pingAll(), this.config.syncPingIntervalMs);
    this.pingTimer.unref();
  }

  async beforeApplicationShutdown() {
    // The shutdown budget: unregisters the registry does not take by then are left to its sweeper.
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    this.accepting = false;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.registerDeadlines.stop();
    // The upgrade listener stays (503 with Retry-After, not a 404 a client may take for a wrong URL).
    // Unregister before closing: a client reconnecting elsewhere then registers after this unregister.
    await this.store.endAll(deadline);
    for (const socket of this.sockets)
      socket.close(SYNC_CLOSE_CODES.serviceRestart, 'gateway shutting down', 'shutdown');
    const closeDeadline = Date.now() + SHUTDOWN_CLOSE_WAIT_MS;
    while (this.sockets.size > 0 && Date.now() < closeDeadline) await new Promise((r) => setTimeout(r, 20));
    for (const socket of this.sockets) socket.ws.terminate();
    await this.store.drainUnregisters(deadline);
  }

  private readonly onUpgrade = (request: IncomingMessage, stream: Duplex, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== SYNC_PATH) return refuseUpgrade(stream, 404, 'Not Found');
    if (!this.accepting || !this.webSocketServer)
      return refuseUpgrade(stream, 503, 'Service Unavailable', 'Retry-After: 1\r\n');
    this.webSocketServer.handleUpgrade(request, stream, head, (ws) => this.accept(ws));
  };

  private accept(ws: WebSocket) {
    const socket = new SyncSocket(
      ws,
      {
        maxSendBufferBytes: this.config.syncMaxSendBufferBytes,
        maxPendingRequests: this.config.syncMaxPendingRequests,
      },
      (s) => this.closeSlowConsumer(s),
    );
    this.sockets.add(socket);
    this.metrics.sockets.set(this.sockets.size);
    this.registerDeadlines.add(socket);
    ws.on('message', (raw, isBinary) => this.onFrame(socket, raw, isBinary));
    ws.on('pong', () => {
      socket.alive = true;
    });
    ws.on('error', (e) => this.logger.event('debug', 'sync socket error', { socketId: socket.id, error: e.message }));
    ws.on('close', (code) => this.onClose(socket, code));
  }

  private registerTimedOut(socket: SyncSocket) {
    if (socket.session || socket.registering) return;
    socket.sendError(null, {
      code: 'NotRegistered',
      message: `No register request within ${this.config.syncRegisterTimeoutMs} ms.`,
    });
    socket.close(SYNC_CLOSE_CODES.registerTimeout, 'register timeout', 'timeout');
  }

  private onClose(socket: SyncSocket, code: number) {
    this.sockets.delete(socket);
    this.metrics.sockets.set(this.sockets.size);
    this.metrics.closes.inc({ code: String(code) });
    this.registerDeadlines.delete(socket);
    this.store.detach(socket);
  }

  private onFrame(socket: SyncSocket, raw: RawData, isBinary: boolean) {
    socket.alive = true;
    if (isBinary)
      return this.refuse(
        socket,
        null,
        null,
        new DomainError('InvalidFrame', 'Frames are JSON text messages; binary frames are not accepted.'),
      );
    let value: unknown;
    const text = rawText(raw);
    try {
      value = JSON.parse(text);
    } catch {
      return this.refuse(socket, null, null, new DomainError('InvalidFrame', 'The frame is not JSON.'));
    }
    // check() is the compiled fast path; errors() walks the value and runs only for refusals.
    const envelope = EdgeValidators.SyncRequestFrame.check(value) ? [] : EdgeValidators.SyncRequestFrame.errors(value);
    if (envelope.length) {
      const id = (value as { id?: unknown } | null)?.id;
      const echo =
        (typeof id === 'string' && id.length > 0 && id.length <= 64) ||
        (Number.isSafeInteger(id) && (id as number) >= 0)
          ? (id as string | number)
          : null;
      return this.refuse(
        socket,
        echo,
        'invalid',
        new DomainError('InvalidFrame', 'The frame is not a request frame.', envelope),
      );
    }
    const frame = value as SyncRequestFrame;
    const data = frame.data ?? {};
    const check = this.dataValidators[frame.type];
    const invalid = check.check(data) ? [] : check.errors(data);
    if (invalid.length)
      return this.refuse(
        socket,
        frame.id,
        frame.type,
        new DomainError('ValidationFailed', `The data of the ${frame.type} request is invalid.`, prefixed(invalid)),
      );
    this.enqueue(socket, { id: frame.id, type: frame.type, data, bytes: text.length });
  }

  /**
   * Answers a frame refused as it was read: at once when no request of the socket awaits its
   * answer (the usual case), else in its turn after theirs, since answers keep the order of the
   * frames. `type` null: not counted in the metrics (not JSON, binary).
   */
  private refuse(
    socket: SyncSocket,
    id: string | number | null,
    type: RefusedFrame['type'] | null,
    error: DomainError,
  ): void {
    if (socket.busy) return this.enqueue(socket, { id, type, refusal: error });
    const { body } = syncRefusal(error);
    socket.sendError(id, body);
    if (type !== null) this.metrics.requests.inc({ type, outcome: body.code });
  }

  /**
   * Queues a frame behind the ones before it (beyond the limit: TooManyRequests at once) and has the queue worked
   * through.
   */
  private enqueue(socket: SyncSocket, frame: QueuedFrame): void {
    if (!socket.enqueue(frame)) {
      socket.sendError(frame.id, {
        code: 'TooManyRequests',
        message: `At most ${this.config.syncMaxPendingRequests} requests may wait for their answer.`,
      });
      if (frame.type !== null) this.metrics.requests.inc({ type: frame.type, outcome: 'TooManyRequests' });
      return;
    }
    if (!socket.draining) {
      socket.draining = true;
      // After the frames of this read are queued too: they are prepared and reported together.
      queueMicrotask(() => void this.drain(socket));
    }
  }

  /** Works through a socket's queue, one batch of requests after the other. */
  private async drain(socket: SyncSocket): Promise<void> {
    try {
      // A socket the gateway closed (a refused token, replaced by a newer socket of its client,
      // unregistered, too slow, shutdown) handles nothing more: what it sent after is dropped
      // unanswered. A register left in a replaced socket's queue would otherwise take the session back.
      while (socket.queue.length > 0 && socket.closeIntent === null) {
        const frames = socket.queue.splice(0, MAX_BATCH_REQUESTS);
        const again = await runWithCorrelation(undefined, () => this.runBatch(socket, frames));
        socket.queue.unshift(...again);
      }
      // Counted as dropped (sync_requests_total{outcome="Dropped"}), so they are not lost silently.
      for (const frame of socket.queue.splice(0)) {
        socket.answered();
        if (frame.type !== null) this.metrics.requests.inc({ type: frame.type, outcome: 'Dropped' });
      }
    } catch (e) {
      this.logger.event('error', 'sync queue failed', {
        socketId: socket.id,
        error: e instanceof Error ? e.message : String(e),
      });
    } finally {
      socket.draining = false;
    }
  }

  /**
   * Handles queued requests as if one after the other, reported in one sequence (README: the /sync
   * edge); a refused report undoes it and the ones after it. Returns the requests to handle again.
   */
  private async runBatch(socket: SyncSocket, frames: QueuedFrame[]): Promise<QueuedFrame[]> {
    // A batch that changes the edge state holds its session busy (a register: once prepared) and
    // moves its revision when taken up and when answered, so a reconcile pass reading the registry
    // meanwhile leaves the session alone (see SessionReconciler).
    if (!frames.some((f) => !f.refusal && !READ_ONLY_REQUESTS.has(f.type)))
      return this.runFrames(socket, frames, () => undefined);
    const held = new Set<ClientSession>();
    const hold = () => {
      const session = socket.session;
      if (!session || held.has(session)) return;
      held.add(session);
      session.busy++;
      session.revision++;
    };
    hold();
    try {
      return await this.runFrames(socket, frames, hold);
    } finally {
      for (const session of held) {
        session.busy--;
        session.revision++;
      }
    }
  }

  /** The work of runBatch; `hold` is called after each request is prepared (a register attaches its session then). */
  private async runFrames(socket: SyncSocket, frames: QueuedFrame[], hold: () => void): Promise<QueuedFrame[]> {
    const entries: BatchEntry[] = [];
    let next = 0;
    for (; next < frames.length; next++) {
      const frame = frames[next]!;
      if (frame.refusal) {
        entries.push({ frame, error: frame.refusal });
        continue;
      }
      if (frame.type === 'unregister' || isSignalling(frame.type)) {
        // Never batched: unregister reports on its own (closing the connections first) and ends the
        // socket; media signalling goes to a media-agent, not to the registry.
        if (entries.length === 0) {
          next++;
          const type = frame.type;
          await this.answer(socket, frame, () =>
            isSignalling(type) ? this.handlers.signal(socket, type, frame.data) : this.handlers.unregister(socket),
          );
        }
        break;
      }
      let step: Step | typeof AWAIT_ANSWERS;
      try {
        const prepared = this.handlers.prepare(socket, frame.type, frame.data);
        // Only register and a join with a token wait for something: the others need no turn of the microtask queue.
        step = prepared instanceof Promise ? await prepared : prepared;
        hold();
      } catch (error) {
        entries.push({ frame, error });
        // A refusal that closes the socket (a bad register or join token) ends the batch: the
        // requests after it are neither prepared nor reported (see drain).
        if (syncRefusal(error).closeCode !== undefined) {
          next++;
          break;
        }
        continue;
      }
      if (step === AWAIT_ANSWERS) {
        // Prepared again once the answers of the requests before it are in.
        if (entries.length > 0) break;
        // Nothing is awaited when nothing was prepared before it: cannot happen.
        entries.push({ frame, error: new DomainError('Internal', 'An internal error occurred.') });
        continue;
      }
      entries.push({ frame, step });
    }
    const reported = entries.filter((entry) => entry.step?.report);
    const bytes = reported.reduce((total, entry) => total + (entry.frame.bytes ?? 0) + REPORT_OVERHEAD_BYTES, 0);
    // The reports a reconcile pass is sending for the session go first: they remove what the
    // registry holds and the session does not (a join of the same channel must not overtake its leave).
    const corrections = socket.session?.corrections;
    if (corrections && reported.length) await corrections;
    const outcomes = reported.length
      ? await this.edge.sequence(
          reported.map((entry) => entry.step!.report!),
          bytes,
        )
      : [];
    reported.forEach((entry, i) => (entry.outcome = outcomes[i]));
    const refused = entries.findIndex((entry) => entry.outcome !== undefined && !('ok' in entry.outcome));
    if (refused >= 0) for (let j = entries.length - 1; j >= refused; j--) entries[j]!.step?.undo?.();
    let last = refused >= 0 && 'error' in entries[refused]!.outcome! ? refused : refused - 1;
    // Reports refused right after it (the registry applied them with it, their events late) are
    // answered with their errors too, not handled again.
    if (refused >= 0)
      while (last >= refused && entries[last + 1]?.outcome && 'error' in entries[last + 1]!.outcome!) last++;
    socket.corked(() => {
      for (let j = 0; j < entries.length && (refused < 0 || j <= last); j++) {
        this.answerEntry(socket, entries[j]!);
      }
    });
    const again = refused >= 0 ? entries.slice(last + 1).map((entry) => entry.frame) : [];
    return [...again, ...frames.slice(next)];
  }

  /** Answers one request of a batch: its refusal, the registry's, or its result. */
  private answerEntry(socket: SyncSocket, entry: BatchEntry): void {
    if (entry.error !== undefined) return this.reply(socket, entry.frame, { error: entry.error });
    if (entry.outcome && 'error' in entry.outcome)
      return this.reply(socket, entry.frame, { error: registryRefusal(entry.step, entry.outcome.error) });
    const answer = entry.outcome && 'ok' in entry.outcome ? ((entry.outcome.ok ?? {}) as Record<string, unknown>) : {};
    let result: unknown;
    try {
      result = entry.step!.finish(answer);
    } catch (error) {
      return this.reply(socket, entry.frame, { error });
    }
    this.reply(socket, entry.frame, { result });
  }

  /** Handles one request on its own and answers it. */
  private async answer(socket: SyncSocket, frame: QueuedFrame, run: () => Promise<unknown>): Promise<void> {
    try {
      this.reply(socket, frame, { result: await run() });
    } catch (error) {
      this.reply(socket, frame, { error });
    }
  }

  /** Sends the answer of a request, and what follows it (register: pushes flow; unregister, refusals: close). */
  private reply(socket: SyncSocket, frame: QueuedFrame, answer: { result: unknown } | { error: unknown }): void {
    socket.answered();
    const { id, type } = frame;
    if ('result' in answer) {
      // Only requests get results (a refused frame is answered with its error).
      socket.sendResult(id!, answer.result);
      this.metrics.requests.inc({ type: type!, outcome: 'ok' });
      if (type === 'register') {
        this.registerDeadlines.delete(socket);
        // The socket may have closed while the registry answered: its session then starts its grace period.
        if (!socket.open) this.store.detach(socket);
        else this.store.markReady(socket);
      } else if (type === 'unregister') {
        socket.close(SYNC_CLOSE_CODES.normal, 'unregistered', 'left');
      }
      return;
    }
    const thrown = answer.error;
    const { body, closeCode } = syncRefusal(thrown);
    if (body.code === 'Internal')
      this.logger.event('error', 'sync request failed', {
        type,
        error: thrown instanceof Error ? thrown.message : String(thrown),
      });
    socket.sendError(id, body);
    if (type !== null) this.metrics.requests.inc({ type, outcome: body.code });
    if (closeCode !== undefined) {
      // At once, not on the close event: nothing more of this socket reaches the session, which
      // (after a refused join) waits out the grace period like after any drop.
      this.store.detach(socket);
      socket.close(closeCode, body.message, 'refused');
    }
  }

  private closeSlowConsumer(socket: SyncSocket) {
    if (socket.closeIntent === 'slow') return;
    this.logger.event('warn', 'closing a slow /sync consumer', {
      socketId: socket.id,
      bufferedBytes: socket.ws.bufferedAmount,
    });
    socket.close(SYNC_CLOSE_CODES.slowConsumer, 'slow consumer: send buffer full', 'slow');
    setTimeout(() => socket.ws.terminate(), SLOW_CONSUMER_TERMINATE_MS).unref();
  }

  private pingAll() {
    for (const socket of this.sockets) {
      if (!socket.alive) {
        socket.ws.terminate();
        continue;
      }
      socket.alive = false;
      socket.ws.ping();
    }
  }
}

function rawText(raw: RawData): string {
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw).toString('utf8');
}

/** A refusal of the registry as the client gets it (a request may name its own code for it, see Step#refused). */
function registryRefusal(step: Step | undefined, wire: unknown): DomainError {
  const error = DomainError.fromWire(wire);
  return step?.refused?.(error) ?? error;
}

function prefixed(errors: FieldError[]): FieldError[] {
  return errors.map((e) => ({ field: e.field ? `data.${e.field}` : 'data', message: e.message }));
}

/**
 * Answers an upgrade request with `status` and closes the socket; `headers`: more header lines, each ending in CRLF.
 */
function refuseUpgrade(stream: Duplex, status: number, text: string, headers = '') {
  stream.end(`HTTP/1.1 ${status} ${text}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  stream.destroy();
}
