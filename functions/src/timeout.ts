/**
 * The one deadline helper: every "this promise, or give up after N ms" in the functions goes through
 * `withTimeout` instead of a hand-written `Promise.race` with a timer (Firestore calls bounded in
 * http/, tool calls in the executor, BigQuery jobs, the embedding lookup).
 */

/** Decides the result once the time is up (or the signal aborted): return a value, or throw. */
type Ending<U> = () => U | PromiseLike<U>;

export interface TimeoutOptions<U> {
  /** Also give up when this aborts first (a cancelled run); `onAbort` then decides the result. */
  signal?: AbortSignal;
  /** Decides the result when `signal` aborts first; default: reject with the signal's reason. */
  onAbort?: (reason: unknown) => U | PromiseLike<U>;
}

/**
 * Settles like `promise` if it settles within `ms`; otherwise like `onTimeout()`: return a fallback
 * value to resolve with it, or throw (or return a rejected promise) to reject.
 *
 * ```ts
 * // reject with an error of your own (what http/within.ts does with StorageTimeout):
 * await withTimeout(doc.get(), 5_000, () => {
 *   throw new StorageTimeout("reading the thread took longer than 5000 ms");
 * });
 * // or fall back to a value:
 * const found = await withTimeout(lookup, 2_000, () => TIMED_OUT);
 * ```
 *
 * - The winner is decided first, then `onTimeout`/`onAbort` runs: `promise` settling while the
 *   ending's own work is under way (cancelling a job) does not change the outcome.
 * - `promise` itself is not stopped (a promise cannot be): stop its work in `onTimeout`, e.g. by
 *   aborting the AbortController whose signal it was given. Its late rejection is handled here, so
 *   it never becomes an unhandled rejection.
 * - The timer and the abort listener are removed as soon as the result is decided. The timer is
 *   not `unref`ed: while someone awaits the result, the deadline is what guarantees an answer.
 */
export async function withTimeout<T, U = never>(
  promise: PromiseLike<T>,
  ms: number,
  onTimeout: Ending<U>,
  opts: TimeoutOptions<U> = {},
): Promise<T | U> {
  const { signal } = opts;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onSignal: (() => void) | undefined;
  const ended = new Promise<{ end: Ending<U> }>((resolve) => {
    timer = setTimeout(() => resolve({ end: onTimeout }), ms);
    if (!signal) return;
    const onAbort =
      opts.onAbort ??
      ((reason: unknown) => {
        throw reason;
      });
    onSignal = () => resolve({ end: () => onAbort(signal.reason) });
    if (signal.aborted) onSignal();
    else signal.addEventListener("abort", onSignal, { once: true });
  });
  try {
    const first = await Promise.race([Promise.resolve(promise).then((value) => ({ value })), ended]);
    if ("end" in first) return await first.end();
    return first.value;
  } finally {
    clearTimeout(timer);
    if (onSignal) signal?.removeEventListener("abort", onSignal);
  }
}
