import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, ReplayPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';

/** Durable name of the webhook-worker consumer on the domain event stream (shared by every replica). */
export const CONSUMER_NAME = 'webhook-worker';

function isCode(e: unknown, code: number): boolean {
  return e instanceof JetStreamApiError && e.code === code;
}

export interface ConsumerSettings {
  ackWaitMs: number;
  maxDeliver: number;
  maxAckPending: number;
}

/**
 * Makes sure the durable pull consumer exists with the configured ack wait, max deliver and max
 * ack pending (updated in place when they changed). New consumers start at the beginning of the
 * stream (`deliver_policy: all`), so events produced before the worker first ran are delivered
 * too; already processed ones are skipped by event id.
 */
export async function ensureConsumer(jsm: JetStreamManager, namespace: string, s: ConsumerSettings): Promise<void> {
  const stream = eventStreamName(namespace);
  const mutable = { ack_wait: nanos(s.ackWaitMs), max_deliver: s.maxDeliver, max_ack_pending: s.maxAckPending };
  try {
    const info = await jsm.consumers.info(stream, CONSUMER_NAME);
    const c = info.config;
    if (c.ack_wait !== mutable.ack_wait || c.max_deliver !== mutable.max_deliver || c.max_ack_pending !== mutable.max_ack_pending) {
      await jsm.consumers.update(stream, CONSUMER_NAME, mutable);
    }
    return;
  } catch (e) {
    if (!isCode(e, JetStreamApiCodes.ConsumerNotFound)) throw e;
  }
  try {
    await jsm.consumers.add(stream, {
      durable_name: CONSUMER_NAME,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      replay_policy: ReplayPolicy.Instant,
      filter_subject: eventSubject(namespace, '>'),
      ...mutable,
    });
  } catch (e) {
    // Another replica created it in between.
    await jsm.consumers.info(stream, CONSUMER_NAME).catch(() => {
      throw e;
    });
  }
}

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
  if (typeof d.applicationId !== 'string' || d.applicationId === '') return { ok: false, reason: 'applicationId missing' };
  if (typeof d.organizationId !== 'string' || d.organizationId === '') return { ok: false, reason: 'organizationId missing' };
  const e = d.event;
  if (!e || typeof e !== 'object') return { ok: false, reason: 'event missing' };
  if (typeof e.id !== 'string' || e.id === '') return { ok: false, reason: 'event.id missing' };
  if (typeof e.type !== 'string' || (e.type as string) === '') return { ok: false, reason: 'event.type missing' };
  if (typeof e.timestamp !== 'number' || !Number.isFinite(e.timestamp)) return { ok: false, reason: 'event.timestamp missing' };
  return { ok: true, value: d as DomainEvent };
}
