import {
  headers as natsHeaders,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';
import { DomainError } from '@switchboard/contracts';

/** Nest's NATS packet shapes: requests are `{ pattern, data, id }`, replies `{ id, response | err, isDisposed }`. */
export interface ReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A reply larger than the server's `max_payload` goes out as several messages on the reply
 * subject, each with this header: `<index>/<count>` (1-based). NATS keeps the order of one
 * publisher's messages, so the requester joins the parts as they come.
 */
export const REPLY_PART_HEADER = 'Sb-Reply-Part';
/** Room left in each part for its header (`NATS/1.0`, the part header, CRLFs). */
const PART_HEADER_ROOM = 128;

/** What a request resolves with: one message, or the parts of a split reply joined. */
export type ReplyMsg = Pick<Msg, 'data' | 'headers'>;

export interface Pending {
  resolve: (msg: ReplyMsg) => void;
  reject: (e: unknown) => void;
  /** Its own timer; none for a request of `requestRawMany` (its batch has one timer for all). */
  timer?: NodeJS.Timeout;
  /** Parts of a split reply received so far. */
  parts?: Uint8Array[];
}

/** Printable ASCII only: a value that can go into a hand-encoded header line as it is. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * Headers of ONE field for a publish, encoded by hand when the value is printable ASCII: nats.js
 * only calls `encode()` on the headers of a published message, and its own MsgHdrs validates and
 * re-encodes every field on every publish, which hot paths (the correlation id of every request,
 * JetStream's `Nats-Msg-Id` of every event) do not need. Anything else goes through nats.js' own
 * headers.
 */
export function singleHeader(name: string, value: string): MsgHdrs {
  if (HEADER_VALUE.test(value)) return new FieldHeader(name, value) as unknown as MsgHdrs;
  const h = natsHeaders();
  h.set(name, value);
  return h;
}

class FieldHeader {
  constructor(
    private readonly name: string,
    private readonly value: string,
  ) {}
  encode(): Uint8Array {
    return Buffer.from(`NATS/1.0\r\n${this.name}: ${this.value}\r\n\r\n`, 'latin1');
  }
}

/** One request of `NatsClient.requestRawMany`. */
export interface RawRequest {
  subject: string;
  data: Uint8Array | string;
  headers?: MsgHdrs;
}

/**
 * The reply packet of a handler that answered `value`, in Nest's format with `response` last:
 * `{"id":…,"isDisposed":true,"response":<value>}`. The requester can then take the answer's JSON
 * text as it is (see `NatsClient.requestJson`) instead of parsing and re-serializing it.
 */
export function replyPacket(id: string, value: unknown): string {
  const head = `{"id":${JSON.stringify(id)},"isDisposed":true`;
  const json = value === undefined ? undefined : JSON.stringify(value);
  return json === undefined ? `${head}}` : `${head},"response":${json}}`;
}

/** The JSON text of `response` when `data` is `replyPacket(id, …)` of a value, else undefined. */
function responseText(data: Uint8Array, id: string): Buffer | undefined {
  const head = `{"id":${JSON.stringify(id)},"isDisposed":true,"response":`;
  const n = head.length;
  // Request ids are ASCII (`idPrefix-seq`), so the head's bytes are its characters.
  if (data.length <= n + 1 || data[data.length - 1] !== 0x7d) return undefined;
  for (let i = 0; i < n; i++) if (data[i] !== head.charCodeAt(i)) return undefined;
  return Buffer.from(data.buffer, data.byteOffset + n, data.length - n - 1);
}

/** The answer of a `requestJson` exchange: its JSON text as the handler serialized it. */
export function readJsonText(data: Uint8Array, id: string): Buffer {
  const text = responseText(data, id);
  if (text) return text;
  const reply = JSON.parse(decoder.decode(data)) as ReplyPacket;
  if (reply.err !== undefined && reply.err !== null) throw DomainError.fromWire(reply.err);
  return reply.response === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(reply.response));
}

/**
 * Publishes a reply; one larger than the server's max_payload is split into parts
 * (REPLY_PART_HEADER) instead of failing.
 */
export function respondInParts(msg: Msg, data: Uint8Array, maxPayload: number | undefined): void {
  if (!maxPayload || data.length <= maxPayload) {
    msg.respond(data);
    return;
  }
  const size = Math.max(1, maxPayload - PART_HEADER_ROOM);
  const count = Math.ceil(data.length / size);
  for (let i = 0; i < count; i++) {
    const h = natsHeaders();
    h.set(REPLY_PART_HEADER, `${i + 1}/${count}`);
    msg.respond(data.subarray(i * size, Math.min(data.length, (i + 1) * size)), { headers: h });
  }
}
/** Keeps one part of a split reply; the whole reply once its last part came. */
export function addPart(p: Pending | undefined, part: string, data: Uint8Array): Uint8Array | Error | undefined {
  if (!p) return undefined;
  const [index, count] = part.split('/').map(Number);
  // A copy: the part is a view of the connection's read buffer.
  (p.parts ??= []).push(data.slice());
  if (index !== count) return undefined;
  if (p.parts.length !== count) return new Error(`a split reply lost parts (${p.parts.length} of ${count} arrived)`);
  return Buffer.concat(p.parts);
}

export function translateNatsError(e: unknown, subject: string, timeout: number): DomainError {
  const cause = e instanceof RequestError ? (e.cause ?? e) : e;
  if (cause instanceof NoRespondersError || (e instanceof RequestError && e.isNoResponders()))
    return new DomainError('Unavailable', `no instance of the service answering ${subject} is running`);
  if (cause instanceof TimeoutError) return new DomainError('Timeout', `no answer to ${subject} within ${timeout} ms`);
  return new DomainError('Unavailable', `messaging failed for ${subject}`);
}

interface ProtocolInternals {
  outbound?: { fill(buf: Uint8Array, ...payloads: Uint8Array[]): void; size(): number };
  pendingLimit?: number;
  sendCommand?: (cmd: string | Uint8Array, ...payloads: Uint8Array[]) => void;
  flushPending?: () => void;
}

/**
 * Sends what one event-loop turn published in one socket write (service-kit README, "Coalesced
 * writes"); false when nats.js' internals are not the expected ones. `onFlush` runs before every
 * write of what was sent, whichever path makes it.
 */
export function coalesceWrites(nc: NatsConnection, onFlush?: () => void): boolean {
  const protocol = (nc as unknown as { protocol?: ProtocolInternals }).protocol;
  if (
    !protocol?.outbound ||
    typeof protocol.sendCommand !== 'function' ||
    typeof protocol.flushPending !== 'function' ||
    typeof protocol.pendingLimit !== 'number'
  )
    return false;
  const outbound = protocol.outbound;
  const flushPending = protocol.flushPending.bind(protocol);
  const flush = onFlush
    ? () => {
        onFlush();
        flushPending();
      }
    : flushPending;
  // Every write of what was sent goes through flushPending (also `flush()` and reconnects).
  protocol.flushPending = flush;
  let scheduled = false;
  const flushScheduled = () => {
    scheduled = false;
    flush();
  };
  protocol.sendCommand = (cmd, ...payloads) => {
    outbound.fill(typeof cmd === 'string' ? encoder.encode(cmd) : cmd, ...payloads);
    if (outbound.size() >= protocol.pendingLimit!) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flushScheduled);
    }
  };
  return true;
}
