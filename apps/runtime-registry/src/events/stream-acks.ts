import { DomainError } from '@switchboard/contracts';

const decoder = new TextDecoder();
/** The head of every PubAck the stream answers (`{"stream":"…","seq":…}`): no error in it. */
const ACK_HEAD = Buffer.from('{"stream":');
const ERROR_FIELD = Buffer.from('"error"');
/** JetStream's refusals that a later attempt cannot change: the message is larger than the stream takes. */
const REFUSED_FOR_GOOD = new Set([10054]);

/** The stream refused an event (`{ error }` in its answer). */
class StreamRefusal extends Error {
  constructor(
    message: string,
    readonly errCode: number | undefined,
  ) {
    super(message);
  }
}

/** Whether no later attempt can get the event stored: larger than NATS' max_payload or the stream's limit. */
export function refusedForGood(e: unknown): boolean {
  if (e instanceof StreamRefusal) return e.errCode !== undefined && REFUSED_FOR_GOOD.has(e.errCode);
  return e instanceof Error && /max_payload/i.test(e.message);
}

/**
 * Throws unless the stream stored the event (or found it a duplicate). The usual answer, a PubAck
 * starting with `{"stream":` and without an `"error"`, is not parsed; anything else is.
 */
export function checkAck(data: Uint8Array): void {
  const b = Buffer.from(data.buffer, data.byteOffset, data.length);
  if (
    b.length > ACK_HEAD.length &&
    b.compare(ACK_HEAD, 0, ACK_HEAD.length, 0, ACK_HEAD.length) === 0 &&
    b.indexOf(ERROR_FIELD) < 0
  )
    return;
  const ack = (data.length ? JSON.parse(decoder.decode(data)) : {}) as {
    stream?: string;
    error?: { code?: number; err_code?: number; description?: string };
  };
  if (ack.error)
    throw new StreamRefusal(
      `the event stream refused the event: ${ack.error.description ?? ack.error.err_code ?? ack.error.code}`,
      ack.error.err_code,
    );
  if (!ack.stream) throw new Error('the event stream answered no acknowledgement');
}

export function unavailable(): DomainError {
  return new DomainError(
    'Unavailable',
    'The event stream is unavailable: the change was applied and its events are queued for delivery.',
  );
}

/** Unavailable, the events being parked in the outbox: late, in order, not lost. */
export class EventsParked extends DomainError {
  constructor() {
    super(
      'Unavailable',
      'The event stream is unavailable: the change was applied and its events are queued for delivery.',
    );
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
  ]).finally(() => clearTimeout(timer));
}

export function sleep(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
