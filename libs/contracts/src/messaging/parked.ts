/**
 * Parked events (dead letters): an event a durable consumer could not process within its attempts
 * (`EVENT_MAX_ATTEMPTS`), or could not read at all, is published to the JetStream stream
 * `parkedStreamName(ns)` on `parkedSubject(ns, service, consumer)` (Nats-Msg-Id =
 * `parkedMessageId(...)`, so a crash between parking and acknowledging parks it once) and only then
 * acknowledged. management-api consumes the stream into its table and lists it on interface B
 * (`ParkedEvents`, operator only); a replay is a request to the owning service on
 * `parkedReplaySubject(ns, service)`, which runs the event through the consumer's processing again.
 */
import { STREAM_LIMITS } from './runtime.js';

export function parkedStreamName(namespace: string): string {
  return `${namespace}-parked`;
}

export function parkedSubject(namespace: string, service: string, consumer: string): string {
  return `${namespace}.parked.${service}.${consumer}`;
}

/** The request subject a service answers replays of one consumer's parked events on (queue group: the service). */
export function parkedReplaySubject(namespace: string, service: string, consumer: string): string {
  return `${namespace}.${service}.v1.parked.replay.${consumer}`;
}

/** One event parked by one consumer, whatever its deliveries. */
export function parkedMessageId(stream: string, streamSequence: number, consumer: string): string {
  return `${stream}:${streamSequence}:${consumer}`;
}

/**
 * Kept 30 days (management-api copies it within seconds); duplicates dropped for an hour (longer than any ack wait).
 */
export function parkedStreamSettings(namespace: string) {
  return {
    name: parkedStreamName(namespace),
    subjects: [parkedSubject(namespace, '*', '*')],
    maxAgeMs: 30 * 24 * 3600 * 1000,
    duplicateWindowMs: 3600 * 1000,
    replicas: STREAM_LIMITS.replicas,
  };
}

/** Durable consumer of the parked stream (management-api). */
export const PARKED_EVENT_CONSUMER = 'management-api-parked';

/** What a consumer publishes when it parks an event (JSON; the payload as base64: it may be anything). */
export interface ParkedEventMessage {
  service: string;
  consumer: string;
  /** The stream the event was read from, its sequence there and its subject. */
  stream: string;
  streamSequence: number;
  subject: string;
  /** The message body, base64. */
  payload: string;
  /** Why it was parked (the last error). */
  error: string;
  /** Deliveries of the event when it was parked. */
  attempts: number;
  /** Unix ms. */
  parkedAt: number;
}

/** A replay request: the parked event, handed to `consumer`'s processing again. */
export interface ParkedReplayRequest {
  consumer: string;
  stream: string;
  streamSequence: number;
  subject: string;
  payload: string;
}

export type ParkedReplayReply = { ok: true } | { ok: false; error: string };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Parked-event text safe for PostgreSQL text and JSON: no NUL, no lone surrogate, at most `max` characters. */
export function safeText(value: string, max = 2000): string {
  const cleaned = value.replaceAll('\u0000', '\\u0000').replace(LONE_SURROGATE, '\uFFFD');
  return cleaned.length > max ? `${cleaned.slice(0, max - 1)}…` : cleaned;
}
