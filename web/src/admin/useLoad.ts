/** Loads something for an admin section: its data, the error in words, and a way to load it again. */
import { useCallback, useEffect, useRef, useState } from "react";
import { errorInWords, parseApiError } from "../data/format";

/** The admin API's own message when it sent one (it says what is wrong), else the error in words. */
function inWords(e: unknown): string {
  const { code, message } = parseApiError(e);
  return code && message ? message : errorInWords(e);
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * Loads on mount and whenever `load` changes. Only the latest load's answer is shown: after two
 * changes in a row, the first reload can answer last (another instance, a slower read), and its
 * older list must not replace the newer one.
 */
export function useLoad<T>(load: () => Promise<T>): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++latest.current;
    setLoading(true);
    try {
      const loaded = await load();
      if (mine !== latest.current) return;
      setData(loaded);
      setError(null);
    } catch (e) {
      if (mine === latest.current) setError(inWords(e));
    } finally {
      if (mine === latest.current) setLoading(false);
    }
  }, [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/** Runs an action, keeping its error in words for the control that started it. */
export function useAction(): [string | null, boolean, (fn: () => Promise<unknown>) => Promise<boolean>] {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (e) {
      setError(inWords(e));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return [error, busy, run];
}
