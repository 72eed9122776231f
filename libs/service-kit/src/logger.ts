import type { LoggerService } from '@nestjs/common';
import { currentCorrelationId } from './correlation.js';

const LEVELS = { debug: 10, verbose: 10, info: 20, log: 20, warn: 30, error: 40, fatal: 50 } as const;
type Level = keyof typeof LEVELS;

/**
 * One JSON object per line on stdout: time, level, service, correlationId, context, msg.
 * Nest's own messages go through it too (it is passed as the application logger).
 */
export class JsonLogger implements LoggerService {
  private readonly min: number;
  constructor(
    private readonly service: string,
    level: 'debug' | 'info' | 'warn' | 'error' = 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {
    this.min = LEVELS[level];
  }

  log(message: unknown, ...rest: unknown[]) {
    this.emit('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.emit('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.emit('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.emit('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.emit('debug', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.emit('fatal', message, rest);
  }

  /** Whether entries of `level` are written (lets hot paths skip building them). */
  enabled(level: Level): boolean {
    return LEVELS[level] >= this.min;
  }

  /** Structured entry with extra fields. */
  event(level: Level, msg: string, fields: Record<string, unknown> = {}) {
    if (LEVELS[level] < this.min) return;
    this.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: level === 'log' ? 'info' : level, service: this.service, correlationId: currentCorrelationId(), msg, ...fields })}\n`,
    );
  }

  private emit(level: Level, message: unknown, rest: unknown[]) {
    if (LEVELS[level] < this.min) return;
    // Nest passes the context name last; for errors a stack may precede it.
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
    const fields: Record<string, unknown> = { context };
    if (message instanceof Error) {
      fields.error = { name: message.name, message: message.message, stack: message.stack };
      this.event(level, message.message, fields);
      return;
    }
    if (level === 'error' && rest.length > 1 && typeof rest[0] === 'string') fields.stack = rest[0];
    this.event(level, typeof message === 'string' ? message : JSON.stringify(message), fields);
  }
}
