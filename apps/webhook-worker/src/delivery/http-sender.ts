import { isIP } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { TargetGuard, TargetRefused, type ResolvedTarget } from './ssrf-guard.js';

export type SendOutcome =
  /** The receiver answered (any status). */
  | { kind: 'response'; statusCode: number; durationMs: number }
  /** Connection refused or reset, DNS failure, TLS failure, ...: retried for reliable webhooks. */
  | { kind: 'network-error'; error: string; durationMs: number }
  /** No complete answer within the timeout: retried for reliable webhooks. */
  | { kind: 'timeout'; error: string; durationMs: number }
  /** Invalid URL or a target the SSRF policy refuses: never retried. */
  | { kind: 'refused'; error: string; durationMs: number };

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** Bytes of a response body read (and discarded) before the connection is dropped. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** Connection pools kept (least recently used closed first): one per checked address, port and TLS name. */
const MAX_POOLS = 1024;

/**
 * POSTs webhook bodies with undici (about half the CPU of node:http per request): keep-alive
 * connections per origin (at most `maxSocketsPerOrigin`), no redirects followed (a 3xx is an
 * unsuccessful answer: undici's `request` never follows them), one timeout covering DNS, connect,
 * request and the whole answer.
 *
 * The target is checked by the SSRF guard, and the pool connects to the checked address itself
 * (its origin is that IP, so nothing resolves the name again: DNS rebinding cannot redirect it);
 * the URL's host goes in `Host`, and undici takes TLS SNI and certificate check from it. A pool
 * serves one (scheme, address, port, host name) so connections never change TLS name.
 */
export class HttpSender {
  private readonly pools = new Map<string, Pool>();

  constructor(
    private readonly guard: TargetGuard,
    private readonly options: { maxSocketsPerOrigin: number },
  ) {}

  async send(request: SendRequest): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return { kind: 'refused', error: 'invalid URL', durationMs: elapsed() };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { kind: 'refused', error: `unsupported URL scheme ${url.protocol}`, durationMs: elapsed() };

    const deadline = started + request.timeoutMs;
    let target: ResolvedTarget;
    try {
      // An IP literal needs no lookup: no timer for it.
      const checking = this.guard.check(url.hostname);
      target = isIP(url.hostname.replace(/^\[|\]$/g, ''))
        ? await checking
        : await withTimeout(checking, request.timeoutMs);
    } catch (e) {
      if (e instanceof TargetRefused) return { kind: 'refused', error: e.message, durationMs: elapsed() };
      if (e instanceof TimeoutError)
        return {
          kind: 'timeout',
          error: `timed out after ${request.timeoutMs} ms resolving ${url.hostname}`,
          durationMs: elapsed(),
        };
      return { kind: 'network-error', error: (e as Error).message, durationMs: elapsed() };
    }
    return this.post(url, target, request, Math.max(1, deadline - performance.now()), elapsed);
  }

  /**
   * The POST through the pool's `dispatch` with a handler of its own: the answer's status, its body
   * read and dropped as it comes (no response stream, no AbortController, no promise per step:
   * fewer objects and a few µs less CPU per request than `request`). One timer covers the rest of
   * the attempt; when it fires the outcome is a timeout at once, and the request is aborted as
   * soon as undici lets it (at once, or when it leaves the pool's queue).
   */
  private post(
    url: URL,
    target: ResolvedTarget,
    request: SendRequest,
    remainingMs: number,
    elapsed: () => number,
  ): Promise<SendOutcome> {
    const headers: Record<string, string> = { ...request.headers, host: url.host };
    if (url.username)
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    return new Promise<SendOutcome>((resolve) => {
      const handler = new PostHandler(resolve, elapsed, request.timeoutMs, remainingMs);
      try {
        this.pool(url, target).dispatch(
          { path: `${url.pathname}${url.search}`, method: 'POST', headers, body: request.body },
          handler,
        );
      } catch (e) {
        handler.onResponseError(null, e as Error);
      }
    });
  }

  /** The pool of connections to the checked address of `url` (most recently used last in the map). */
  private pool(url: URL, target: ResolvedTarget): Pool {
    const secure = url.protocol === 'https:';
    const address = target.family === 6 ? `[${target.address}]` : target.address;
    const origin = `${url.protocol}//${address}:${url.port || (secure ? 443 : 80)}`;
    const key = secure ? `${origin} ${url.hostname}` : origin;
    let pool = this.pools.get(key);
    if (pool) {
      this.pools.delete(key);
    } else {
      pool = new Pool(origin, { connections: this.options.maxSocketsPerOrigin });
      if (this.pools.size >= MAX_POOLS) {
        const [oldestKey, oldest] = this.pools.entries().next().value!;
        this.pools.delete(oldestKey);
        // Requests in progress on it finish first.
        oldest.close().catch(() => undefined);
      }
    }
    this.pools.set(key, pool);
    return pool;
  }

  close(): void {
    for (const pool of this.pools.values()) pool.destroy().catch(() => undefined);
    this.pools.clear();
  }
}

/**
 * The answer of one POST: its status once the whole body was read (and dropped), or the
 * connection dropped past MAX_RESPONSE_BYTES; a network error; or a timeout.
 */
class PostHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private statusCode = 0;
  private read = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly done: (outcome: SendOutcome) => void,
    private readonly elapsed: () => number,
    private readonly timeoutMs: number,
    remainingMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.settle({ kind: 'timeout', error: `timed out after ${this.timeoutMs} ms`, durationMs: this.elapsed() });
      this.controller?.abort(new Error('timed out'));
    }, remainingMs);
  }

  private settle(outcome: SendOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.done(outcome);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Timed out while waiting for a connection of the pool.
    if (this.settled) controller.abort(new Error('timed out'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // 1xx answers are interim: the final one follows.
    if (statusCode >= 200) this.statusCode = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.read += chunk.length;
    if (this.read > MAX_RESPONSE_BYTES && !this.settled) {
      this.settle({ kind: 'response', statusCode: this.statusCode, durationMs: this.elapsed() });
      controller.abort(new Error('answer too large'));
    }
  }

  onResponseEnd(): void {
    this.settle({ kind: 'response', statusCode: this.statusCode, durationMs: this.elapsed() });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.settle({ kind: 'network-error', error: describe(error), durationMs: this.elapsed() });
  }
}

function describe(e: Error): string {
  const code = (e as NodeJS.ErrnoException).code;
  // The connection closed before the whole answer: logged in the words node:http used (and the log has).
  if (code === 'UND_ERR_SOCKET') return 'ECONNRESET: socket hang up';
  return code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
}

class TimeoutError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new TimeoutError()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
