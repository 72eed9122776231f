import { DomainError } from '@switchboard/contracts';

// VideoRoom error codes (janus_videoroom.c) that name something missing.
const NOT_FOUND_CODES = new Set([426 /* no such room */, 428 /* no such feed */]);

/**
 * A Janus or janode failure as the DomainError the agent answers: a timeout or a lost link is
 * `Unavailable`; an unknown room or feed is `NotFound`; any other refusal is `Internal`, with
 * Janus's own message (never a stack).
 */
export function janusFailure(what: string, error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = Number((error as { _code?: unknown })._code ?? /^(\d{3}) /.exec(message)?.[1]);
  if (NOT_FOUND_CODES.has(code)) return new DomainError('NotFound', `${what}: ${message}`);
  if (/in time|not connected|closed|lost/i.test(message))
    return new DomainError('Unavailable', `${what}: Janus is unavailable (${message})`);
  return new DomainError('Internal', `${what}: Janus refused (${message})`);
}
