/**
 * Sends the hostile /sync frames and checks each answer against docs/sync-protocol.md: an error
 * frame with a documented code (never `Internal`) carrying the request's id (or id null for a frame
 * that could not be read), or the documented close of a refused token (4001-4003) or of an
 * oversized frame (1009); and, where the socket stays open, a `ping` still answered after it.
 */
import { SYNC_CLOSE_CODES, SYNC_ERROR_CODES, SYNC_REQUEST_TYPES, type SyncRequestType } from '@switchboard/contracts';
import type { Fixtures } from './fixtures.js';
import { hostileFramesFor, malformedFrames, type HostileFrame } from './sync-corpus.js';
import { SyncSocket } from './sync-session.js';

const TOKEN_CLOSES: number[] = [
  SYNC_CLOSE_CODES.tokenInvalid,
  SYNC_CLOSE_CODES.tokenExpired,
  SYNC_CLOSE_CODES.applicationRefused,
];

export interface SyncOutcome {
  frames: number;
  byCode: Record<string, number>;
  violations: string[];
  /** Request types attacked (each with at least one frame). */
  typesAttacked: Set<string>;
}

/** Frames that may end the socket with a token close: a `register`, or a `join` whose token leaf is hostile. */
function mayCloseForToken(frame: HostileFrame): boolean {
  return frame.type === 'register' || (frame.type === 'join' && frame.category.includes('token'));
}

async function check(socket: SyncSocket, frame: HostileFrame, outcome: SyncOutcome): Promise<void> {
  const from = socket.frames.length;
  socket.send(frame.text, frame.binary);
  outcome.frames++;
  if (frame.type) outcome.typesAttacked.add(frame.type);
  // An unreadable frame is answered with id null, or with its id when the gateway could read one.
  const answer = await socket.answer(frame.id ?? undefined, from);
  const what = `${frame.type ?? 'frame'} ${frame.category}`;
  if (!answer) {
    const code = await socket.closed(500);
    if (code !== null && mayCloseForToken(frame) && TOKEN_CLOSES.includes(code)) return;
    outcome.violations.push(`${what}: no answer${code === null ? '' : ` (closed ${code})`}`);
    return;
  }
  const code = answer.type === 'error' ? (answer.error?.code ?? 'none') : 'result';
  outcome.byCode[code] = (outcome.byCode[code] ?? 0) + 1;
  if (answer.type !== 'error') outcome.violations.push(`${what}: answered with a result`);
  else if (!(SYNC_ERROR_CODES as readonly string[]).includes(code) || code === 'Internal')
    outcome.violations.push(`${what}: error code ${code} (${answer.error?.message})`);
  if (frame.id === null && answer.id === null && code !== 'InvalidFrame')
    outcome.violations.push(`${what}: unreadable frame answered ${code}, not InvalidFrame`);
}

/** Each request type's hostile frames on the live session, and the unreadable frames; the session must stay usable. */
export async function attackSession(fixtures: Fixtures, outcome: SyncOutcome): Promise<void> {
  let session = fixtures.session;
  const values = {
    channelId: fixtures.channelId,
    connectionId: fixtures.connectionId,
    token: fixtures.registerToken,
    state: 'initializing',
  };
  const types = SYNC_REQUEST_TYPES.filter((type) => type !== 'register');
  // join frames with a hostile token close the socket (documented): they go last.
  const frames = types.flatMap((type) => hostileFramesFor(type, values));
  const ordered = [
    ...malformedFrames(),
    ...frames.filter((f) => !mayCloseForToken(f)),
    ...frames.filter(mayCloseForToken),
  ];
  for (const frame of ordered) {
    if (!session.open) session = await fixtures.reconnect();
    await check(session, frame, outcome);
    if (!mayCloseForToken(frame) && !session.open)
      outcome.violations.push(`${frame.type} ${frame.category}: closed the session (${session.closeCode})`);
    else if (!mayCloseForToken(frame) && outcome.frames % 25 === 0) await expectPing(session, frame, outcome);
  }
  if (session.open) await expectPing(session, ordered[ordered.length - 1]!, outcome);
}

async function expectPing(socket: SyncSocket, after: HostileFrame, outcome: SyncOutcome): Promise<void> {
  const answer = await socket.request('ping');
  if (answer?.type !== 'result')
    outcome.violations.push(
      `ping after ${after.type} ${after.category}: ${JSON.stringify(answer)} (closed ${socket.closeCode})`,
    );
}

/** Hostile `register` frames, each on a fresh socket (a refused token closes it, as documented). */
export async function attackRegister(fixtures: Fixtures, outcome: SyncOutcome): Promise<void> {
  let socket = await SyncSocket.open(fixtures.syncUrl);
  for (const frame of hostileFramesFor('register', {
    token: fixtures.registerToken,
    applicationId: fixtures.applicationId,
  })) {
    if (!socket.open) socket = await SyncSocket.open(fixtures.syncUrl);
    await check(socket, frame, outcome);
  }
  socket.close();
}

/**
 * A text frame that is not UTF-8 (lone surrogate bytes): an InvalidFrame error, or the close RFC 6455 asks for (1007).
 */
export async function attackInvalidUtf8(fixtures: Fixtures, outcome: SyncOutcome): Promise<void> {
  const socket = await SyncSocket.open(fixtures.syncUrl);
  const from = socket.frames.length;
  socket.send(
    Buffer.concat([
      Buffer.from('{"id":"u","type":"ping","data":{"x":"'),
      Buffer.from([0xff, 0xed, 0xa0, 0x80]),
      Buffer.from('"}}'),
    ]),
  );
  outcome.frames++;
  const answer = await socket.answer(null, from, 2000);
  const code = answer ? null : await socket.closed();
  if (answer?.error?.code !== 'InvalidFrame' && code !== 1007)
    outcome.violations.push(`text frame with invalid UTF-8: ${JSON.stringify(answer)} closed ${code}`);
  socket.close();
}

/** A frame over SYNC_MAX_FRAME_BYTES closes the socket with 1009, registered or not. */
export async function attackOversizedFrame(
  fixtures: Fixtures,
  outcome: SyncOutcome,
  type: SyncRequestType = 'ping',
): Promise<void> {
  const socket = await SyncSocket.open(fixtures.syncUrl);
  socket.send(JSON.stringify({ id: 'big', type, data: { pad: 'x'.repeat(70 * 1024) } }));
  outcome.frames++;
  const code = await socket.closed();
  if (code !== SYNC_CLOSE_CODES.frameTooLarge)
    outcome.violations.push(`oversized ${type} frame: closed ${code}, not 1009`);
}
