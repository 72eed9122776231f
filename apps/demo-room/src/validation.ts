import { randomUUID } from 'node:crypto';

/** What the page asks for: a display name, a room (the channel id) and, to refresh, its client id. */
export interface TokenAsk {
  name: string;
  room: string;
  clientId: string;
}

/** A refused field: the page shows `message`, the answer is a 400 naming `field`. */
export interface FieldError {
  field: string;
  message: string;
}

const NAME_MAX = 40;
const ROOM_MAX = 64;
/** Rooms are channel ids, which travel in interface A paths: letters, digits, `.`, `_`, `-`. */
const ROOM_PATTERN = /^[\p{L}\p{N}._-]+$/u;
const CLIENT_ID_PATTERN = /^c-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LONE_SURROGATE = /\p{Surrogate}/u;
const CONTROL = /\p{Cc}/u;
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

function textError(field: string, value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return `${field} must be a string`;
  if (value.includes('\u0000')) return `${field} must not contain U+0000`;
  if (LONE_SURROGATE.test(value)) return `${field} must be well-formed Unicode (no lone surrogate)`;
  if (CONTROL.test(value)) return `${field} must not contain control characters`;
  // Characters as people count them (an emoji with its modifiers is one); the UTF-16 length is capped too.
  const length = [...GRAPHEMES.segment(value)].length;
  if (length === 0) return `${field} must not be empty`;
  if (length > max || value.length > max * 4) return `${field} must be at most ${max} characters`;
  return undefined;
}

/** Checks the body of `POST /api/token`; a missing client id is a new client (fresh ids). */
export function validateTokenAsk(body: unknown): { ask: TokenAsk } | { errors: FieldError[] } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { errors: [{ field: '', message: 'the body must be a JSON object with name and room' }] };
  const { name, room, clientId } = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  const trimmedName = typeof name === 'string' ? name.trim() : name;
  const nameError = textError('name', trimmedName, NAME_MAX);
  if (nameError) errors.push({ field: 'name', message: nameError });
  const roomError = textError('room', room, ROOM_MAX);
  if (roomError) errors.push({ field: 'room', message: roomError });
  else if (!ROOM_PATTERN.test(room as string))
    errors.push({ field: 'room', message: 'room may hold only letters, digits, ".", "_" and "-"' });
  if (clientId !== undefined && (typeof clientId !== 'string' || !CLIENT_ID_PATTERN.test(clientId)))
    errors.push({ field: 'clientId', message: 'clientId must be one this backend gave out (c-<uuid>)' });
  if (errors.length) return { errors };
  return {
    ask: { name: trimmedName as string, room: room as string, clientId: (clientId as string) ?? `c-${randomUUID()}` },
  };
}

/** The user, device and client ids of a client id this backend gave out (one user and device per client). */
export function idsOf(clientId: string): { userId: string; deviceId: string; clientId: string } {
  const suffix = clientId.slice(2);
  return { userId: `u-${suffix}`, deviceId: `d-${suffix}`, clientId };
}
