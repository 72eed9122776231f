import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** Request context that follows a request through HTTP handlers and across NATS hops. */
export interface RequestContext {
  correlationId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const CORRELATION_HEADER = 'x-correlation-id';
const SANE = /^[\x21-\x7e]{1,128}$/;

export function currentCorrelationId(): string | undefined {
  return storage.getStore()?.correlationId;
}

export function runWithCorrelation<T>(correlationId: string | undefined, fn: () => T): T {
  return storage.run({ correlationId: acceptCorrelationId(correlationId) }, fn);
}

/** Runs `fn` with an id that went through `acceptCorrelationId` already. */
export function runWithAcceptedCorrelation<T>(correlationId: string, fn: () => T): T {
  return storage.run({ correlationId }, fn);
}

/** Uses the caller's id when it is sane (printable, bounded), otherwise makes a new one. */
export function acceptCorrelationId(value: string | undefined | null): string {
  return value && SANE.test(value) ? value : randomUUID();
}
