import { setTimeout as sleep } from 'node:timers/promises';
import { isDependencyDown } from './errors.js';

export interface DependencyRetryOptions {
  /** True once the caller stops: a failure is then thrown at once (the work in hand is handed back). */
  stopping: () => boolean;
  /** Called before each wait (e.g. `msg.working()`, so JetStream keeps the events in hand assigned). */
  keepAlive?: () => void;
  /** The longest wait between two tries (100 ms, doubling up to this; default 2 s). */
  maxDelayMs?: number;
  /** Told of the first failure and of every 20th after it (for a log line). */
  onRetry?: (error: unknown, tries: number) => void;
}

/**
 * Runs `attempt` until it goes through, trying it again while it fails because a dependency is
 * down (isDependencyDown: PostgreSQL restarting, say). Consumers of the event stream use it to keep
 * the work in hand instead of handing it back while later events go on: those would overtake it.
 * Any other failure, or any while `stopping()`, is thrown.
 */
export async function retryWhileDependencyDown<T>(
  attempt: () => Promise<T>,
  options: DependencyRetryOptions,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (e) {
      if (!isDependencyDown(e) || options.stopping()) throw e;
      if (tries === 1 || tries % 20 === 0) options.onRetry?.(e, tries);
    }
    options.keepAlive?.();
    await sleep(Math.min(100 * 2 ** Math.min(tries - 1, 5), options.maxDelayMs ?? 2000));
  }
}
