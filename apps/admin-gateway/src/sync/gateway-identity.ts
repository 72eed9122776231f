import { randomUUID } from 'node:crypto';

/**
 * The id of this gateway replica (a UUID per process): pushes for its clients arrive on `pushSubject(namespace, id)`.
 */
export const GATEWAY_ID = Symbol('GATEWAY_ID');
export const gatewayIdProvider = { provide: GATEWAY_ID, useFactory: () => randomUUID() };

/** Parses a NATS payload that is either plain JSON or a Nest packet `{ pattern, data }`. */
export function decodeNatsJson(bytes: Uint8Array): unknown {
  const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
  if (value && typeof value === 'object' && 'pattern' in value && 'data' in value)
    return (value as { data: unknown }).data;
  return value;
}

export function encodeNatsEvent(pattern: string, data: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ pattern, data }));
}
