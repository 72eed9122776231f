import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
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

/**
 * POSTs webhook bodies with node:http(s): keep-alive connections per origin (at most
 * `maxSocketsPerOrigin`), no redirects followed (a 3xx is an unsuccessful answer), the target
 * checked by the SSRF guard and connected to by the checked address (see ssrf-guard.ts), one
 * timeout covering DNS, connect, request and the whole answer.
 */
export class HttpSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    private readonly guard: TargetGuard,
    options: { maxSocketsPerOrigin: number },
  ) {
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: options.maxSocketsPerOrigin, maxFreeSockets: options.maxSocketsPerOrigin, scheduling: 'fifo' });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: options.maxSocketsPerOrigin, maxFreeSockets: options.maxSocketsPerOrigin, scheduling: 'fifo' });
  }

  async send(request: SendRequest): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return { kind: 'refused', error: 'invalid URL', durationMs: elapsed() };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'refused', error: `unsupported URL scheme ${url.protocol}`, durationMs: elapsed() };

    const deadline = started + request.timeoutMs;
    let target: ResolvedTarget;
    try {
      target = await withTimeout(this.guard.check(url.hostname), request.timeoutMs);
    } catch (e) {
      if (e instanceof TargetRefused) return { kind: 'refused', error: e.message, durationMs: elapsed() };
      if (e instanceof TimeoutError) return { kind: 'timeout', error: `timed out after ${request.timeoutMs} ms resolving ${url.hostname}`, durationMs: elapsed() };
      return { kind: 'network-error', error: (e as Error).message, durationMs: elapsed() };
    }
    return this.post(url, target, request, Math.max(1, deadline - performance.now()), elapsed);
  }

  private post(url: URL, target: ResolvedTarget, request: SendRequest, remainingMs: number, elapsed: () => number): Promise<SendOutcome> {
    const secure = url.protocol === 'https:';
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const pinned: LookupFunction = (_host, options, callback) => {
      const cb = callback as (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
      if ((options as { all?: boolean }).all) cb(null, [{ address: target.address, family: target.family }]);
      else cb(null, target.address, target.family);
    };
    const body = Buffer.from(request.body, 'utf8');
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const options: https.RequestOptions = {
        protocol: url.protocol,
        hostname,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        lookup: pinned,
        headers: { ...request.headers, host: url.host, 'content-length': String(body.length) },
        ...(url.username ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
        ...(secure ? { servername: hostname } : {}),
      };
      const req = (secure ? https : http).request(options, (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) {
            res.destroy();
            finish({ kind: 'response', statusCode: res.statusCode ?? 0, durationMs: elapsed() });
          }
        });
        res.on('end', () => finish({ kind: 'response', statusCode: res.statusCode ?? 0, durationMs: elapsed() }));
        res.on('error', (e) => finish({ kind: 'network-error', error: describe(e), durationMs: elapsed() }));
      });
      const timer = setTimeout(() => {
        finish({ kind: 'timeout', error: `timed out after ${request.timeoutMs} ms`, durationMs: elapsed() });
        req.destroy();
      }, remainingMs);
      req.on('error', (e) => finish({ kind: 'network-error', error: describe(e), durationMs: elapsed() }));
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function describe(e: Error): string {
  const code = (e as NodeJS.ErrnoException).code;
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
