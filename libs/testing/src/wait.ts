export interface WaitForOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Pause between attempts (default 50 ms). */
  intervalMs?: number;
  /** Named in the timeout error, e.g. "the webhook delivery". */
  description?: string;
}

/**
 * Calls `fn` until it returns something other than `false`, `null` or `undefined`, and resolves to
 * that value. A throw counts as "not yet"; on timeout the last throw (or value) is in the error.
 * For an assertion block, return true at its end: `await waitFor(() => { expect(x).toBe(1); return true; })`.
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 50, description = 'the condition' }: WaitForOptions = {},
): Promise<Exclude<Awaited<T>, false | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== false && value !== null && value !== undefined)
        return value as Exclude<Awaited<T>, false | null | undefined>;
      last = `it returned ${String(value)}`;
      lastError = undefined;
    } catch (error) {
      lastError = error;
      last = `it threw: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() >= deadline) {
      const failure = new Error(`Timed out after ${timeoutMs} ms waiting for ${description}; last time ${last}`);
      if (lastError !== undefined) (failure as Error & { cause?: unknown }).cause = lastError;
      throw failure;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
