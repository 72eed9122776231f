import type { DomainEvent } from '@switchboard/contracts';

/** A stream message decoded: the DomainEvent, or why it cannot be used. */
export type DecodedEvent = { ok: true; value: DomainEvent } | { ok: false; reason: string };

const decoder = new TextDecoder();

/**
 * Checks what the worker relies on (event id, type, timestamp; owner ids) and nothing more: the
 * rest of the EventInfo is delivered as the runtime wrote it.
 */
export function decodeDomainEvent(data: Uint8Array): DecodedEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(data));
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const d = parsed as Partial<DomainEvent> | null;
  if (!d || typeof d !== 'object') return { ok: false, reason: 'not an object' };
  if (typeof d.applicationId !== 'string' || d.applicationId === '')
    return { ok: false, reason: 'applicationId missing' };
  if (typeof d.organizationId !== 'string' || d.organizationId === '')
    return { ok: false, reason: 'organizationId missing' };
  const e = d.event;
  if (!e || typeof e !== 'object') return { ok: false, reason: 'event missing' };
  if (typeof e.id !== 'string' || e.id === '') return { ok: false, reason: 'event.id missing' };
  if (typeof e.type !== 'string' || (e.type as string) === '') return { ok: false, reason: 'event.type missing' };
  if (typeof e.timestamp !== 'number' || !Number.isFinite(e.timestamp))
    return { ok: false, reason: 'event.timestamp missing' };
  const test = d.testWebhook;
  if (test !== undefined && (!test || typeof test !== 'object' || typeof test.id !== 'string' || test.id === ''))
    return { ok: false, reason: 'testWebhook without an id' };
  return { ok: true, value: d as DomainEvent };
}
