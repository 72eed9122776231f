/** An expected failure: the CLI prints its message (and log tail) without a stack trace. */
export class StackError extends Error {
  constructor(message, { logTail, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StackError';
    this.expected = true;
    if (logTail) this.logTail = logTail;
  }
}

export function tailText(text, lines = 20) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
