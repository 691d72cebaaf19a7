// Loads data and keeps it fresh: at once, then every `intervalMs` while the
// tab is visible (and at once when it becomes visible again), never two
// requests of one hook at a time, slower after errors. Each answer is
// conditional (ApiClient), so an unchanged resource costs a 304 and no
// render. When `deps` change, the old data stays on screen until the new
// arrives (no flash of "Loading" when a filter changes). An interval of 0
// reads once and stops.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Fetched } from '../api/client';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean; // no data and no error yet
  refresh: () => void;
}

export const DEFAULT_POLL_MS = 3000;
const MAX_BACKOFF_MS = 30000;

export function usePoll<T>(
  load: (signal: AbortSignal) => Promise<Fetched<T>>,
  deps: readonly unknown[],
  intervalMs: number = DEFAULT_POLL_MS,
  enabled = true, // false: wait (e.g. for an id another request brings)
): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: Error }>({});
  const loadRef = useRef(load);
  loadRef.current = load;
  const interval = useRef(intervalMs);
  interval.current = intervalMs;
  const kick = useRef<() => void>(() => {});

  useEffect(() => {
    if (!enabled) return;
    let stopped = false;
    let applied = false; // an answer for these deps is on screen
    let timer: ReturnType<typeof setTimeout> | undefined;
    let inFlight: AbortController | undefined;
    let failures = 0; // in a row; 0 when the last request succeeded
    let again = false; // asked for while a request was in flight

    const schedule = () => {
      const every = interval.current;
      if (stopped || every <= 0) return;
      clearTimeout(timer);
      timer = setTimeout(tick, failures ? Math.min(every * 2 ** failures, MAX_BACKOFF_MS) : every);
    };
    const tick = async () => {
      if (stopped) return;
      if (inFlight) {
        again = true;
        return;
      }
      if (document.visibilityState === 'hidden') return; // resumes when visible
      const controller = new AbortController();
      inFlight = controller;
      try {
        const { data, changed } = await loadRef.current(controller.signal);
        if (stopped) return;
        // An unchanged answer with nothing to clear sets no state: no render.
        if (changed || !applied) setState({ data });
        else if (failures > 0) setState((s) => ({ data: s.data }));
        failures = 0;
        applied = true;
      } catch (e) {
        if (stopped || (e as Error).name === 'AbortError') return;
        failures += 1;
        setState((s) => ({ data: s.data, error: e as Error }));
      } finally {
        if (inFlight === controller) inFlight = undefined;
        if (again && !stopped) {
          again = false;
          void tick();
        } else {
          schedule();
        }
      }
    };
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      clearTimeout(timer);
      void tick();
    };
    kick.current = () => {
      clearTimeout(timer);
      void tick();
    };
    document.addEventListener('visibilitychange', onVisible);
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      inFlight?.abort();
      document.removeEventListener('visibilitychange', onVisible);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, enabled]);

  // A new pace starts with a request (so one last read happens when polling
  // stops because the data can no longer change, e.g. a trial ended).
  const firstPace = useRef(true);
  useEffect(() => {
    if (firstPace.current) {
      firstPace.current = false;
      return;
    }
    kick.current();
  }, [intervalMs]);

  const refresh = useCallback(() => kick.current(), []);
  return {
    data: state.data,
    error: state.error,
    loading: state.data === undefined && state.error === undefined,
    refresh,
  };
}
