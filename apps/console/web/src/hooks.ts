import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from './api';

/** How often the live pages read the runtime again. */
export const LIVE_POLL_MS = 2000;

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  refresh: () => void;
}

/** Loads `load()` now and every `intervalMs` (0: once) while mounted; `refresh` reloads at once. */
export function usePolled<T>(load: () => Promise<T>, deps: readonly unknown[], intervalMs = 0): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const refresh = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    let live = true;
    const run = () =>
      loadRef.current().then(
        (value) => {
          if (!live) return;
          setData(value);
          setError(undefined);
        },
        (failure: unknown) => {
          if (live) setError(failure instanceof Error ? failure.message : String(failure));
        },
      );
    void run();
    const timer = intervalMs > 0 ? setInterval(() => void run(), intervalMs) : undefined;
    return () => {
      live = false;
      if (timer) clearInterval(timer);
    };
  }, [...deps, tick, intervalMs]);
  return { data, error, refresh };
}

/** Application ids the credential knows: those live on interface A and those configured on interface B. */
export async function loadApplicationIds(): Promise<string[]> {
  const [live, configs] = await Promise.all([
    api<string[]>('GET', '/api/a/applications'),
    api<{ value: Array<{ applicationId: string | null }> }>('GET', '/api/b/ApplicationConfigs?$top=1000'),
  ]);
  const configured = configs.value.map((config) => config.applicationId).filter((id): id is string => id !== null);
  return [...new Set([...live, ...configured])].sort((one, other) => one.localeCompare(other));
}
